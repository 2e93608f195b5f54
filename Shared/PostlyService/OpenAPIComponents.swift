/// What every service's OpenAPI document shares, written once: the operations routes, and the
/// components several services answer with. `OpenAPIDocument` adds them to a service's own part.
/// The answers of every internal import route (`ImportGate` and `ImportOutcome`), the same in
/// auth, posts and comments: interpolated into their documents as the route's `responses`.
public let importRouteResponses = #"""
{
  "200": {"$ref": "#/components/responses/ImportOutcome"},
  "400": {"$ref": "#/components/responses/Problem"},
  "401": {"$ref": "#/components/responses/ImportRefused"},
  "404": {"$ref": "#/components/responses/ImportRefused"},
  "413": {"$ref": "#/components/responses/ImportRefused"},
  "415": {"$ref": "#/components/responses/Problem"},
  "422": {"$ref": "#/components/responses/ImportRefused"},
  "503": {"$ref": "#/components/responses/Unavailable"}
}
"""#

let sharedOpenAPIComponents = #"""
{
  "paths": {
    "/health/live": {"get": {"summary": "The process is up", "responses": {"200": {"description": "Up"}}}},
    "/health/ready": {"get": {"summary": "Its database and the broker answered the last check (every 2 seconds) and the auth service's keys are known: for operators",
      "responses": {"200": {"description": "Ready"}, "503": {"$ref": "#/components/responses/Unavailable"}}}},
    "/health/serving": {"get": {"summary": "Every dependency but the broker answered the last check (its database, the auth service's keys, its own such as search's index), whatever the broker does (events wait in the outbox): for an orchestrator's readiness probe",
      "responses": {"200": {"description": "Serving"}, "503": {"$ref": "#/components/responses/Unavailable"}}}},
    "/metrics": {"get": {"summary": "Prometheus metrics",
      "responses": {"200": {"description": "The metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
    "/openapi.json": {"get": {"summary": "This document",
      "responses": {"200": {"description": "The document", "content": {"application/json": {"schema": {"type": "object"}}}}}}}
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
      "importToken": {"type": "http", "scheme": "bearer", "description": "POSTLY_IMPORT_TOKEN, for the internal import routes (ImportGate)"}},
    "parameters": {
      "page": {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 1}},
      "limit": {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}},
      "formats": {"name": "formats", "in": "query", "schema": {"type": "string"},
        "description": "Comma-separated; html adds contentHtml to each listed post (left out by default). Other names are ignored."}
    },
    "responses": {
      "Problem": {"description": "A problem document (RFC 9457)", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "Unavailable": {"description": "A dependency is down; try again after Retry-After seconds",
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "Message": {"description": "Done", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}},
      "ImportOutcome": {"description": "The batch is stored: how many documents were created, how many were there already (left untouched), and the ones refused",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ImportOutcome"}}}},
      "ImportRefused": {"description": "401 without the import token; 404 when POSTLY_IMPORT_TOKEN is not set (the route does not exist); 413 over 900 KiB; 422 over 500 documents or a malformed document. Nothing is stored",
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
    },
    "schemas": {
      "Problem": {"type": "object", "required": ["type", "title", "status", "detail", "error", "code", "requestId"],
        "properties": {"type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"}, "detail": {"type": "string"},
          "error": {"type": "string", "description": "The same as detail"}, "code": {"type": "string"}, "requestId": {"type": "string"},
          "errors": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Per field, on validation failures"}}},
      "Message": {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}},
      "ImportOutcome": {"type": "object", "required": ["created", "existing", "rejected"],
        "properties": {"created": {"type": "integer"}, "existing": {"type": "integer"},
          "rejected": {"type": "array", "items": {"type": "object", "required": ["id", "reason"],
            "properties": {"id": {"type": "string"}, "reason": {"type": "string"}}}}}},
      "Author": {"type": "object", "required": ["userId", "name", "profilePicture"],
        "properties": {"userId": {"type": "string"}, "name": {"type": "string"}, "profilePicture": {"type": ["string", "null"]}}},
      "Comment": {"type": "object", "required": ["_id", "postId", "content", "author", "createdAt", "likes"],
        "properties": {"_id": {"type": "string"}, "postId": {"type": "string"}, "content": {"type": "string"},
          "author": {"$ref": "#/components/schemas/Author"},
          "createdAt": {"type": "string", "format": "date-time", "description": "RFC 3339 UTC with exactly three fractional digits"},
          "likes": {"type": "integer", "const": 0}}},
      "ListedPost": {"type": "object", "description": "A post as lists show it: contentHtml only with formats=html",
        "required": ["_id", "title", "content", "excerpt", "slug", "status", "coverImage", "author", "views", "likes", "comments", "commentsCount", "readTime", "createdAt", "updatedAt", "publishedAt", "version", "publishAt"],
        "properties": {"_id": {"type": "string"}, "title": {"type": "string"}, "content": {"type": "string", "description": "Markdown"},
          "contentHtml": {"type": "string", "description": "content rendered to sanitized HTML"},
          "excerpt": {"type": "string", "maxLength": 200}, "slug": {"type": "string", "maxLength": 80}, "status": {"type": "string", "enum": ["published", "draft", "scheduled"]},
          "coverImage": {"type": ["string", "null"]}, "author": {"$ref": "#/components/schemas/Author"}, "views": {"type": "integer"}, "likes": {"type": "integer"},
          "comments": {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}}, "commentsCount": {"type": "integer"}, "readTime": {"type": "integer", "description": "Minutes"},
          "createdAt": {"type": "string", "format": "date-time", "description": "RFC 3339 UTC with exactly three fractional digits"},
          "updatedAt": {"type": "string", "format": "date-time"},
          "publishedAt": {"type": ["string", "null"], "format": "date-time"}, "version": {"type": "integer"},
          "publishAt": {"type": ["string", "null"], "format": "date-time", "description": "When a scheduled post is to be published; null otherwise"}}},
      "Post": {"description": "A single post always carries contentHtml",
        "allOf": [{"$ref": "#/components/schemas/ListedPost"}, {"required": ["contentHtml"]}]},
      "Pagination": {"type": "object", "required": ["total", "page", "limit", "totalPages"],
        "properties": {"total": {"type": "integer"}, "page": {"type": "integer"}, "limit": {"type": "integer"}, "totalPages": {"type": "integer"}}}
    }
  }
}
"""#
