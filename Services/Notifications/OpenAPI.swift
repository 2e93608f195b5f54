import PostlyService

/// The notifications service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPI = OpenAPIDocument(
    #"""
    {
      "openapi": "3.1.0",
      "info": {"title": "Postly notifications service", "version": "1.0.0"},
      "paths": {
        "/api/notifications": {
          "get": {
            "summary": "The caller's notifications, newest first",
            "description": "Likes of and comments on the caller's posts by other users. unreadCount counts all unread notifications, whatever the page or filter.",
            "security": [{"bearer": []}],
            "parameters": [
              {"name": "page", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "default": 1}},
              {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}},
              {
                "name": "unread",
                "in": "query",
                "required": false,
                "description": "true lists only unread notifications",
                "schema": {"type": "string", "enum": ["true", "false"], "default": "false"}
              }
            ],
            "responses": {
              "200": {"description": "A page of notifications", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NotificationPage"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/api/notifications/read": {
          "post": {
            "summary": "Mark notifications as read",
            "description": "Either ids (1 to 100 of the caller's notifications; others' and unknown ids are ignored) or all: true. The message says how many were marked.",
            "security": [{"bearer": []}],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object",
                    "properties": {"ids": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 100}, "all": {"type": "boolean"}}
                  }
                }
              }
            },
            "responses": {
              "200": {"description": "Marked", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/api/notifications/stream-ticket": {
          "post": {
            "summary": "A ticket for opening the stream without an Authorization header",
            "description": "For browsers' EventSource. Single-use, valid for 60 seconds, bound to the caller's session.",
            "security": [{"bearer": []}],
            "responses": {
              "200": {
                "description": "The ticket",
                "content": {"application/json": {"schema": {"type": "object", "required": ["ticket"], "properties": {"ticket": {"type": "string"}}}}}
              },
              "401": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/api/notifications/stream": {
          "get": {
            "summary": "The caller's new notifications, live, as Server-Sent Events",
            "description": "Each new notification as 'event: notification', 'id: <_id>', 'data: <the Notification as JSON>'; a comment line at least every 15 seconds. It opens with an event without data whose id is the caller's newest notification ('start:<userId>' when there is none). With Last-Event-ID (or lastEventId in the query, for a new EventSource), what came after that notification is sent first. The stream ends when the session is revoked or the service shuts down; a client that falls too far behind is disconnected and should reconnect with Last-Event-ID.",
            "security": [{"bearer": []}, {}],
            "parameters": [
              {"name": "Last-Event-ID", "in": "header", "required": false, "schema": {"type": "string"}},
              {"name": "lastEventId", "in": "query", "required": false, "schema": {"type": "string"}},
              {
                "name": "ticket",
                "in": "query",
                "required": false,
                "description": "A stream ticket, instead of the Authorization header",
                "schema": {"type": "string"}
              }
            ],
            "responses": {
              "200": {"description": "The event stream", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
              "401": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        }
      },
      "components": {
        "schemas": {
          "Notification": {
            "type": "object",
            "required": ["_id", "type", "actor", "postId", "postTitle", "commentId", "createdAt", "readAt"],
            "properties": {
              "_id": {"type": "string"},
              "type": {"type": "string", "enum": ["post.liked", "comment.created"]},
              "actor": {"$ref": "#/components/schemas/Author"},
              "postId": {"type": "string"},
              "postTitle": {"type": "string"},
              "commentId": {"type": ["string", "null"]},
              "createdAt": {"type": "string", "format": "date-time", "description": "RFC 3339 UTC with exactly three fractional digits"},
              "readAt": {"type": ["string", "null"], "format": "date-time"}
            }
          },
          "NotificationPage": {
            "type": "object",
            "required": ["notifications", "pagination", "unreadCount"],
            "properties": {
              "notifications": {"type": "array", "items": {"$ref": "#/components/schemas/Notification"}},
              "pagination": {"$ref": "#/components/schemas/Pagination"},
              "unreadCount": {"type": "integer", "minimum": 0}
            }
          }
        }
      }
    }
    """#)

