import PostlyService

/// The federation service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPI = OpenAPIDocument(
    #"""
    {
      "openapi": "3.1.0",
      "info": {"title": "Postly federation service", "version": "1.0.0",
        "description": "ActivityPub: every author an actor the fediverse can follow. Ids are made from PUBLIC_BASE_URL; ActivityPub documents are application/activity+json."},
      "paths": {
        "/.well-known/webfinger": {
          "get": {
            "summary": "An account by acct:handle@host (or acct:userId@host)",
            "parameters": [{"name": "resource", "in": "query", "required": true, "schema": {"type": "string"}}],
            "responses": {
              "200": {"description": "The account's JRD, with Access-Control-Allow-Origin: *",
                "content": {"application/jrd+json": {"schema": {"$ref": "#/components/schemas/JRD"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/.well-known/nodeinfo": {
          "get": {
            "summary": "Where the NodeInfo document is",
            "responses": {"200": {"description": "Links", "content": {"application/json": {"schema": {"type": "object", "required": ["links"]}}}}}
          }
        },
        "/nodeinfo/2.1": {
          "get": {
            "summary": "NodeInfo 2.1: software postly, protocol activitypub, users and local posts",
            "responses": {
              "200": {"description": "The NodeInfo", "content": {"application/json": {"schema": {"type": "object", "required": ["version", "software", "protocols", "usage"]}}}},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/actor": {
          "get": {
            "summary": "The instance actor (Application), which signs key fetches",
            "responses": {"200": {"$ref": "#/components/responses/Activity"}, "503": {"$ref": "#/components/responses/Unavailable"}}
          }
        },
        "/ap/users/{userId}": {
          "get": {
            "summary": "An author as a Person, with its public key",
            "parameters": [{"$ref": "#/components/parameters/userId"}],
            "responses": {
              "200": {"$ref": "#/components/responses/Activity"},
              "400": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/users/{userId}/outbox": {
          "get": {
            "summary": "The author's published posts as Create(Article), newest first: the collection, or a page of 20",
            "parameters": [
              {"$ref": "#/components/parameters/userId"},
              {"name": "page", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000000}}
            ],
            "responses": {
              "200": {"$ref": "#/components/responses/Activity"},
              "400": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/users/{userId}/followers": {
          "get": {
            "summary": "How many follow the author (the followers are not listed)",
            "parameters": [{"$ref": "#/components/parameters/userId"}],
            "responses": {
              "200": {"$ref": "#/components/responses/Activity"},
              "400": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/users/{userId}/following": {
          "get": {
            "summary": "Whom the author follows: nobody",
            "parameters": [{"$ref": "#/components/parameters/userId"}],
            "responses": {
              "200": {"$ref": "#/components/responses/Activity"},
              "400": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/posts/{postId}": {
          "get": {
            "summary": "A published post as an Article (content: its sanitized HTML); a deleted one as a Tombstone",
            "description": "The object of the post's first publication. A post published again after it was unpublished is a new object, /ap/posts/{postId}/{publication}; this one is then a Tombstone (410).",
            "parameters": [{"name": "postId", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": {
              "200": {"$ref": "#/components/responses/Activity"},
              "400": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "410": {"$ref": "#/components/responses/Activity"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/posts/{postId}/{publication}": {
          "get": {
            "summary": "The object of a later publication of a post: an Article while it is the current one, then a Tombstone",
            "description": "Servers keep a deleted object's tombstone and refuse another Create of its id, so a post published again after it was unpublished gets a new id, numbered by the sequence of its Create. An earlier publication answers 410 (so does any number below the current one: the earlier ones are not kept), any other 404.",
            "parameters": [
              {"name": "postId", "in": "path", "required": true, "schema": {"type": "string"}},
              {"name": "publication", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {"$ref": "#/components/responses/Activity"},
              "400": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "410": {"$ref": "#/components/responses/Activity"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/inbox": {
          "post": {
            "summary": "The shared inbox",
            "description": "See /ap/users/{userId}/inbox.",
            "security": [{"httpSignature": []}],
            "requestBody": {"$ref": "#/components/requestBodies/Activity"},
            "responses": {
              "202": {"description": "Accepted (also when it was ignored or seen before)"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/ap/users/{userId}/inbox": {
          "post": {
            "summary": "An author's inbox: Follow (accepted with a signed Accept), Undo of it, Delete of the sending actor; others are ignored",
            "description": "Every request must carry an HTTP Signature (draft-cavage, rsa-sha256) covering (request-target), host, date and digest, by the activity's actor, with Date within 12 hours back and 1 hour ahead. An activity id (at most 2,048 bytes) its actor sent before changes nothing.",
            "security": [{"httpSignature": []}],
            "parameters": [{"$ref": "#/components/parameters/userId"}],
            "requestBody": {"$ref": "#/components/requestBodies/Activity"},
            "responses": {
              "202": {"description": "Accepted (also when it was ignored or seen before)"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "404": {"$ref": "#/components/responses/Problem"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        }
      },
      "components": {
        "securitySchemes": {
          "httpSignature": {"type": "apiKey", "in": "header", "name": "Signature", "description": "draft-cavage HTTP Signature, rsa-sha256"}
        },
        "parameters": {
          "userId": {"name": "userId", "in": "path", "required": true, "schema": {"type": "string"}}
        },
        "requestBodies": {
          "Activity": {
            "required": true,
            "content": {
              "application/activity+json": {"schema": {"$ref": "#/components/schemas/Activity"}},
              "application/ld+json": {"schema": {"$ref": "#/components/schemas/Activity"}},
              "application/json": {"schema": {"$ref": "#/components/schemas/Activity"}}
            }
          }
        },
        "responses": {
          "Activity": {"description": "An ActivityPub document", "content": {"application/activity+json": {"schema": {"type": "object", "required": ["id", "type"]}}}}
        },
        "schemas": {
          "Activity": {"type": "object", "required": ["id", "type", "actor"],
            "properties": {"id": {"type": "string"}, "type": {"type": "string"}, "actor": {}, "object": {}}},
          "JRD": {"type": "object", "required": ["subject", "links"],
            "properties": {"subject": {"type": "string"}, "aliases": {"type": "array", "items": {"type": "string"}},
              "links": {"type": "array", "items": {"type": "object"}}}}
        }
      }
    }
    """#)
