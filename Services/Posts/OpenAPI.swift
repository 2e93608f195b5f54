import PostlyService

/// The posts service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPI = OpenAPIDocument(
    #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "Postly posts service",
        "version": "1.0.0",
        "description": "Posts, drafts, scheduled posts, slugs, likes and views, the change feed, and RSS and Atom feeds. Errors are RFC 9457 problem documents (application/problem+json) with `error` repeating `detail`; validation failures add `errors`."
      },
      "paths": {
        "/internal/import/posts": {
          "post": {
            "summary": "Import posts of an earlier deployment (postly-import)",
            "description": "Internal: served on this service's port only when POSTLY_IMPORT_TOKEN is set, never routed by the gateway. Insert-only by _id: a post there already, or deleted since (its tombstone), is counted as existing and left untouched. Ids, slugs (a slug a post here holds gets -2, -3...), dates and views are kept; contentHtml, excerpt and readTime are made here. Each created post emits post.created with imported: true. aliases: the posts of user from are to's, and GET /api/users/{from}/posts lists to's.",
            "x-internal": true,
            "security": [{"importToken": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["posts"],
              "properties": {
                "posts": {"type": "array", "maxItems": 500, "items": {
                  "type": "object", "required": ["_id", "title", "content", "status", "slug", "author", "createdAt", "updatedAt", "views"],
                  "properties": {"_id": {"type": "string"}, "title": {"type": "string"}, "content": {"type": "string"},
                    "status": {"type": "string", "enum": ["published", "draft"]}, "slug": {"type": "string"},
                    "coverImage": {"type": ["string", "null"]}, "author": {"$ref": "#/components/schemas/Author"},
                    "createdAt": {"type": "string", "format": "date-time"}, "updatedAt": {"type": "string", "format": "date-time"},
                    "publishedAt": {"type": ["string", "null"], "format": "date-time"}, "views": {"type": "integer", "minimum": 0}}}},
                "aliases": {"type": "array", "items": {"type": "object", "required": ["from", "to"],
                  "properties": {"from": {"type": "string"}, "to": {"type": "string"}}}}}}}}},
            "responses": \#(importRouteResponses)
          }
        },
        "/internal/import/likes": {
          "post": {
            "summary": "Import likes of an earlier deployment (postly-import)",
            "description": "Internal: served on this service's port only when POSTLY_IMPORT_TOKEN is set, never routed by the gateway. One like per post and user: a like there already, or twice in the batch, is counted as existing; a like of an unknown post is rejected. The likes of the posts the batch touches are recounted from the stored likes in the same transaction. No events.",
            "x-internal": true,
            "security": [{"importToken": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["likes"],
              "properties": {"likes": {"type": "array", "maxItems": 500, "items": {
                "type": "object", "required": ["postId", "userId", "createdAt"],
                "properties": {"postId": {"type": "string"}, "userId": {"type": "string"}, "createdAt": {"type": "string", "format": "date-time"}}}}}}}}},
            "responses": \#(importRouteResponses)
          }
        },
        "/api/posts": {
          "get": {
            "summary": "Published posts, newest first; status=draft or status=scheduled lists the caller's drafts or scheduled posts (JWT)",
            "parameters": [
              {"$ref": "#/components/parameters/page"},
              {"$ref": "#/components/parameters/limit"},
              {"$ref": "#/components/parameters/status"},
              {"$ref": "#/components/parameters/formats"}
            ],
            "responses": {
              "200": {"$ref": "#/components/responses/PostPage"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"}
            }
          },
          "post": {
            "summary": "Create a post",
            "security": [{"bearer": []}],
            "parameters": [
              {
                "name": "Idempotency-Key",
                "in": "header",
                "schema": {"type": "string", "maxLength": 255},
                "description": "A retry with the same key by the same user within 24 hours answers the first answer byte for byte, even after the post was edited or deleted; the same key with another body answers 422; a retry while the first is still running answers 409."
              }
            ],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPost"}}}},
            "responses": {
              "201": {"description": "Created; Location and ETag set", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "409": {"$ref": "#/components/responses/Problem"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/posts/{id}": {
          "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
          "get": {
            "summary": "A post by id; counts one view. Another user's draft or scheduled post answers 404.",
            "parameters": [
              {"$ref": "#/components/parameters/postIfNoneMatch"},
              {"$ref": "#/components/parameters/countView"}
            ],
            "responses": {"200": {"$ref": "#/components/responses/Post"}, "304": {"description": "Not modified"}, "400": {"$ref": "#/components/responses/Problem"}, "404": {"$ref": "#/components/responses/Problem"}}
          },
          "put": {
            "summary": "Edit a post (author only); coverImage null removes it. Scheduling: status scheduled (or published) with a future publishAt schedules; status draft unschedules; status published with publishAt null publishes now; status published without publishAt leaves a scheduled post scheduled",
            "security": [{"bearer": []}],
            "parameters": [
              {
                "name": "If-Match",
                "in": "header",
                "schema": {"type": "string"},
                "description": "\"<version>\"; a stale one answers 412 with the current post"
              }
            ],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PostChanges"}}}},
            "responses": {
              "200": {"$ref": "#/components/responses/Post"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "403": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "412": {"$ref": "#/components/responses/Post"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Problem"}
            }
          },
          "delete": {
            "summary": "Delete a post (author only)",
            "security": [{"bearer": []}],
            "responses": {
              "200": {"$ref": "#/components/responses/Message"},
              "401": {"$ref": "#/components/responses/Problem"},
              "403": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/posts/slug/{slug}": {
          "get": {
            "summary": "A post by current or former slug; counts one view",
            "parameters": [
              {"name": "slug", "in": "path", "required": true, "schema": {"type": "string"}},
              {"$ref": "#/components/parameters/postIfNoneMatch"},
              {"$ref": "#/components/parameters/countView"}
            ],
            "responses": {"200": {"$ref": "#/components/responses/Post"}, "304": {"description": "Not modified"}, "400": {"$ref": "#/components/responses/Problem"}, "404": {"$ref": "#/components/responses/Problem"}}
          }
        },
        "/api/posts/{id}/like": {
          "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
          "post": {
            "summary": "Like (twice counts once)",
            "security": [{"bearer": []}],
            "responses": {
              "200": {"$ref": "#/components/responses/Message"},
              "401": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"}
            }
          },
          "delete": {
            "summary": "Unlike (not liked is fine)",
            "security": [{"bearer": []}],
            "responses": {
              "200": {"$ref": "#/components/responses/Message"},
              "401": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"}
            }
          },
          "get": {
            "summary": "Whether the caller likes the post",
            "security": [{"bearer": []}],
            "responses": {
              "200": {
                "description": "Liked",
                "content": {"application/json": {"schema": {"type": "object", "required": ["liked"], "properties": {"liked": {"type": "boolean"}}}}}
              },
              "401": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/users/{userId}/posts": {
          "get": {
            "summary": "A user's posts; status=draft and status=scheduled only for the caller's own id (else 403)",
            "parameters": [
              {"name": "userId", "in": "path", "required": true, "schema": {"type": "string"}},
              {"$ref": "#/components/parameters/page"},
              {"$ref": "#/components/parameters/limit"},
              {"$ref": "#/components/parameters/status"},
              {"$ref": "#/components/parameters/formats"}
            ],
            "responses": {
              "200": {"$ref": "#/components/responses/PostPage"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "403": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/feeds/posts.rss": {
          "get": {
            "summary": "RSS 2.0 feed of the site's 20 latest published posts (HEAD too): full sanitized HTML, tag-URI ids that survive slug changes, author names, never emails. ETag, and Last-Modified once every write it counts has committed (seconds after a write); Cache-Control: public, max-age=300",
            "parameters": [{"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/rss+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"}
            }
          },
          "head": {
            "summary": "The feed's headers without its body",
            "parameters": [{"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/rss+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"}
            }
          }
        },
        "/api/feeds/posts.atom": {
          "get": {
            "summary": "Atom (RFC 4287) feed of the site's 20 latest published posts (HEAD too): full sanitized HTML, tag-URI ids that survive slug changes, author names, never emails. ETag, and Last-Modified once every write it counts has committed (seconds after a write); Cache-Control: public, max-age=300",
            "parameters": [{"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/atom+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"}
            }
          },
          "head": {
            "summary": "The feed's headers without its body",
            "parameters": [{"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/atom+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"}
            }
          }
        },
        "/api/users/{userId}/feed.rss": {
          "get": {
            "summary": "RSS 2.0 feed of one author's 20 latest published posts (HEAD too): full sanitized HTML, tag-URI ids that survive slug changes, author names, never emails. ETag, and Last-Modified once every write it counts has committed (seconds after a write); Cache-Control: public, max-age=300",
            "parameters": [{"name": "userId", "in": "path", "required": true, "schema": {"type": "string"}}, {"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/rss+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"},
              "404": {"$ref": "#/components/responses/Problem"}
            }
          },
          "head": {
            "summary": "The feed's headers without its body",
            "parameters": [{"name": "userId", "in": "path", "required": true, "schema": {"type": "string"}}, {"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/rss+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"},
              "404": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/users/{userId}/feed.atom": {
          "get": {
            "summary": "Atom (RFC 4287) feed of one author's 20 latest published posts (HEAD too): full sanitized HTML, tag-URI ids that survive slug changes, author names, never emails. ETag, and Last-Modified once every write it counts has committed (seconds after a write); Cache-Control: public, max-age=300",
            "parameters": [{"name": "userId", "in": "path", "required": true, "schema": {"type": "string"}}, {"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/atom+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"},
              "404": {"$ref": "#/components/responses/Problem"}
            }
          },
          "head": {
            "summary": "The feed's headers without its body",
            "parameters": [{"name": "userId", "in": "path", "required": true, "schema": {"type": "string"}}, {"$ref": "#/components/parameters/ifNoneMatch"}, {"$ref": "#/components/parameters/ifModifiedSince"}],
            "responses": {
              "200": {"description": "The feed", "content": {"application/atom+xml": {"schema": {"type": "string"}}}},
              "304": {"description": "Not modified"},
              "404": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/changes": {
          "get": {
            "summary": "What changed since a cursor, for a client that was offline: posts, comments and authors in one order, each once at its latest state, with tombstones of deleted and unpublished posts. JWT optional: the caller's own drafts and scheduled posts too. Cache-Control: no-store",
            "parameters": [
              {"name": "since", "in": "query", "schema": {"type": "string"}, "description": "A cursor (next of an earlier page), or now for the current one; without it, everything visible (a resync)"},
              {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}},
              {"name": "wait", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 30, "default": 0}, "description": "Seconds to hold the request while nothing is new (a long poll)"}
            ],
            "responses": {
              "200": {"description": "A page of changes", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ChangePage"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "410": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/users/me/posts": {
          "get": {
            "summary": "The caller's posts, any status unless status is given",
            "security": [{"bearer": []}],
            "parameters": [
              {"$ref": "#/components/parameters/page"},
              {"$ref": "#/components/parameters/limit"},
              {"$ref": "#/components/parameters/status"},
              {"$ref": "#/components/parameters/formats"}
            ],
            "responses": {
              "200": {"$ref": "#/components/responses/PostPage"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"}
            }
          }
        }
      },
      "components": {
        "parameters": {
          "status": {"name": "status", "in": "query", "schema": {"type": "string", "enum": ["published", "draft", "scheduled"]}},
          "ifNoneMatch": {"name": "If-None-Match", "in": "header", "schema": {"type": "string"}, "description": "304 when it matches the ETag (weak comparison; * matches); If-Modified-Since is then ignored"},
          "ifModifiedSince": {"name": "If-Modified-Since", "in": "header", "schema": {"type": "string"}, "description": "IMF-fixdate: 304 when at or after Last-Modified"},
          "postIfNoneMatch": {"name": "If-None-Match", "in": "header", "schema": {"type": "string"}, "description": "304 when it lists the post's ETag, its version (weak comparison; * matches)"},
          "countView": {"name": "countView", "in": "query", "schema": {"type": "string", "enum": ["true", "false"]}, "description": "false: no view is counted (the other services' look at a post)"}
        },
        "responses": {
          "Post": {"description": "A post; ETag \"<version>\"", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "PostPage": {
            "description": "A page of posts",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object",
                  "required": ["posts", "pagination"],
                  "properties": {
                    "posts": {"type": "array", "items": {"$ref": "#/components/schemas/ListedPost"}},
                    "pagination": {"$ref": "#/components/schemas/Pagination"}
                  }
                }
              }
            }
          }
        },
        "schemas": {
          "NewPost": {
            "type": "object",
            "required": ["title", "content"],
            "properties": {
              "title": {"type": "string", "minLength": 1, "maxLength": 200},
              "content": {"type": "string", "maxLength": 100000},
              "status": {"type": "string", "enum": ["published", "draft", "scheduled"], "default": "published"},
              "coverImage": {"type": ["string", "null"], "format": "uri", "maxLength": 2048},
              "publishAt": {"$ref": "#/components/schemas/PublishAt"}
            }
          },
          "PostChanges": {
            "type": "object",
            "properties": {
              "title": {"type": "string", "minLength": 1, "maxLength": 200},
              "content": {"type": "string", "maxLength": 100000},
              "status": {"type": "string", "enum": ["published", "draft", "scheduled"]},
              "coverImage": {"type": ["string", "null"], "format": "uri", "maxLength": 2048},
              "publishAt": {"$ref": "#/components/schemas/PublishAt"}
            }
          },
          "ChangePage": {
            "type": "object",
            "required": ["changes", "next", "more"],
            "properties": {
              "changes": {"type": "array", "items": {"$ref": "#/components/schemas/Change"}},
              "next": {"type": "string", "description": "The cursor to call with next (opaque)"},
              "more": {"type": "boolean", "description": "Whether to call again at once"}
            }
          },
          "Change": {
            "type": "object",
            "required": ["kind", "id", "changedAt", "deleted"],
            "properties": {
              "kind": {"type": "string", "enum": ["post", "comment", "author"]},
              "id": {"type": "string"},
              "changedAt": {"type": "string", "format": "date-time"},
              "deleted": {"type": "boolean"},
              "reason": {"type": "string", "enum": ["deleted", "unpublished"], "description": "On a post's tombstone"},
              "postId": {"type": "string", "description": "On a comment's entries"},
              "post": {"$ref": "#/components/schemas/Post"},
              "comment": {"$ref": "#/components/schemas/Comment"},
              "author": {"$ref": "#/components/schemas/Author"}
            }
          },
          "PublishAt": {
            "type": ["string", "null"],
            "format": "date-time",
            "description": "RFC 3339 with offset: when to publish, after now and within 366 days; with status scheduled or published it schedules the post (422 otherwise: errors.publishAt or errors.status say why). A scheduled post is a draft for everyone but its author until then."
          }
        }
      }
    }
    """#)

