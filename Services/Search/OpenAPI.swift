/// The search service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPIDocument = #"""
{
  "openapi": "3.1.0",
  "info": {"title": "Postly search service", "version": "1.0.0"},
  "paths": {
    "/api/posts/search": {
      "get": {
        "summary": "Published posts matching a text, best match first",
        "description": "q is text, never syntax: any character is searched for or ignored. Title, content and author name are searched, accents folded, English words by their stem; each word of 5 letters or more may have one typo (substitution, insertion, deletion or swap of neighbours), of 9 letters or more two; the last word also matches the words it begins. Ranking: more of the words matched, words in the title, words matched exactly, then the newest. A bare array (without page and limit, the first 20); X-Total-Count carries the number of all matches. Results are listed posts: contentHtml only with formats=html; views is 0 (no event carries views).",
        "parameters": [
          {"name": "q", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 200}, "description": "1 to 200 characters after trimming"},
          {"name": "page", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "default": 1}},
          {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}},
          {"name": "formats", "in": "query", "required": false, "schema": {"type": "string"}, "description": "Comma-separated; html adds contentHtml to each result. Other names are ignored."}
        ],
        "security": [{}, {"bearer": []}],
        "responses": {
          "200": {
            "description": "The results",
            "headers": {"X-Total-Count": {"schema": {"type": "integer"}, "description": "The number of all matches"}},
            "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/SearchResult"}}}}
          },
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Unavailable"}
        }
      }
    },
    "/health/live": {"get": {"summary": "The process is up", "responses": {"200": {"description": "Up"}}}},
    "/health/ready": {"get": {"summary": "Database and broker reachable", "responses": {"200": {"description": "Ready"}, "503": {"$ref": "#/components/responses/Unavailable"}}}},
    "/metrics": {"get": {"summary": "Prometheus metrics, postly_search_index_lag_seconds and postly_events_applied_total among them", "responses": {"200": {"description": "Metrics", "content": {"text/plain": {}}}}}},
    "/openapi.json": {"get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI 3.1"}}}}
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
    "schemas": {
      "Author": {
        "type": "object", "required": ["userId", "name", "profilePicture"],
        "properties": {"userId": {"type": "string"}, "name": {"type": "string"}, "profilePicture": {"type": ["string", "null"]}}
      },
      "Comment": {
        "type": "object", "required": ["_id", "postId", "content", "author", "createdAt", "likes"],
        "properties": {
          "_id": {"type": "string"}, "postId": {"type": "string"}, "content": {"type": "string"},
          "author": {"$ref": "#/components/schemas/Author"},
          "createdAt": {"type": "string", "format": "date-time"}, "likes": {"type": "integer", "const": 0}
        }
      },
      "SearchResult": {
        "type": "object",
        "required": ["_id", "title", "content", "excerpt", "slug", "status", "coverImage", "author", "views", "likes", "comments", "commentsCount", "readTime", "createdAt", "updatedAt", "publishedAt", "version", "highlights"],
        "properties": {
          "_id": {"type": "string"}, "title": {"type": "string"}, "content": {"type": "string", "description": "Markdown"},
          "contentHtml": {"type": "string", "description": "Only with formats=html"},
          "excerpt": {"type": "string"}, "slug": {"type": "string"}, "status": {"type": "string", "const": "published"},
          "coverImage": {"type": ["string", "null"]}, "author": {"$ref": "#/components/schemas/Author"},
          "views": {"type": "integer"}, "likes": {"type": "integer"},
          "comments": {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}}, "commentsCount": {"type": "integer"},
          "readTime": {"type": "integer"},
          "createdAt": {"type": "string", "format": "date-time", "description": "RFC 3339 UTC with exactly three fractional digits"},
          "updatedAt": {"type": "string", "format": "date-time"}, "publishedAt": {"type": ["string", "null"], "format": "date-time"},
          "version": {"type": "integer"},
          "highlights": {
            "type": "object", "required": ["title", "excerpt"],
            "description": "Plain text, HTML-escaped, the matched words in <mark>...</mark>",
            "properties": {"title": {"type": "string"}, "excerpt": {"type": "string"}}
          }
        }
      },
      "Problem": {
        "type": "object", "required": ["type", "title", "status", "detail", "error", "code"],
        "properties": {
          "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
          "detail": {"type": "string"}, "error": {"type": "string"}, "code": {"type": "string"}, "requestId": {"type": "string"}
        }
      }
    },
    "responses": {
      "Problem": {"description": "A problem document", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "Unavailable": {
        "description": "The database is down",
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
      }
    }
  }
}
"""#
