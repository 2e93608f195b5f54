import PostlyService

/// The comments service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPI = OpenAPIDocument(
    #"""
    {
      "openapi": "3.1.0",
      "info": {"title": "Postly comments service", "version": "1.0.0"},
      "paths": {
        "/internal/import/comments": {
          "post": {
            "summary": "Import comments of an earlier deployment (postly-import)",
            "description": "Internal: served on this service's port only when POSTLY_IMPORT_TOKEN is set, never routed by the gateway. Insert-only by _id: a comment there already is counted as existing and left untouched. A post this service has not heard of yet is waited for (IMPORT_POST_WAIT_MS); its comments are rejected when it stays unknown or was deleted. Each created comment emits comment.created with imported: true (notifications skip it).",
            "x-internal": true,
            "security": [{"importToken": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["comments"],
              "properties": {"comments": {"type": "array", "maxItems": 500, "items": {
                "type": "object", "required": ["_id", "postId", "content", "author", "createdAt"],
                "properties": {"_id": {"type": "string"}, "postId": {"type": "string"}, "content": {"type": "string"},
                  "author": {"$ref": "#/components/schemas/Author"}, "createdAt": {"type": "string", "format": "date-time"}}}}}}}}},
            "responses": \#(importRouteResponses)
          }
        },
        "/api/posts/{postId}/comments": {
          "parameters": [{"$ref": "#/components/parameters/PostId"}],
          "get": {
            "summary": "A post's comments, oldest first",
            "description": "A bare array. Without page and limit, every comment. Drafts only for their author.",
            "parameters": [
              {"name": "page", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "default": 1}},
              {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}}
            ],
            "security": [{}, {"bearer": []}],
            "responses": {
              "200": {
                "description": "The comments",
                "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}}}}
              },
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          },
          "post": {
            "summary": "Comment on a post",
            "description": "content is 1 to 5,000 characters after trimming. A retry with the same Idempotency-Key by the same user within 24 hours answers the first result again; the same key with a different request answers 422.",
            "security": [{"bearer": []}],
            "parameters": [{"name": "Idempotency-Key", "in": "header", "required": false, "schema": {"type": "string", "minLength": 1, "maxLength": 255}}],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"type": "object", "required": ["content"], "properties": {"content": {"type": "string", "minLength": 1, "maxLength": 5000}}}}
              }
            },
            "responses": {
              "201": {
                "description": "The comment",
                "headers": {"Location": {"schema": {"type": "string"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Comment"}}}
              },
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "409": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/api/posts/{postId}/comments/{commentId}": {
          "parameters": [{"$ref": "#/components/parameters/PostId"}, {"name": "commentId", "in": "path", "required": true, "schema": {"type": "string"}}],
          "delete": {
            "summary": "Delete a comment",
            "description": "Allowed for the comment's author and the post's author. A body is not expected; Content-Type: application/json with an empty body is fine.",
            "security": [{"bearer": []}],
            "responses": {
              "200": {"description": "Deleted", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}},
              "401": {"$ref": "#/components/responses/Problem"},
              "403": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        }
      },
      "components": {
        "parameters": {"PostId": {"name": "postId", "in": "path", "required": true, "schema": {"type": "string"}}},
        "responses": {
          "Unavailable": {
            "description": "A dependency (the database, or the posts service for a post not known yet) is down",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          }
        }
      }
    }
    """#)

