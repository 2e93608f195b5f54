import PostlyService

/// The images service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPI = OpenAPIDocument(
    #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "Postly images service",
        "version": "1.0.0",
        "description": "Cover-image suggestions from Pexels, in Pexels' own JSON shape, with the API key kept on the server. Answers are cached (6 hours fresh by default); identical concurrent questions reach Pexels once. A fresh cached answer is never limited."
      },
      "paths": {
        "/api/images/search": {
          "get": {
            "summary": "Search photos",
            "description": "query is 1 to 100 characters after trimming; it is compared lower-cased with inner white space collapsed, and a '+' is a space.",
            "security": [{"bearer": []}],
            "parameters": [
              {"name": "query", "in": "query", "required": true, "schema": {"type": "string", "minLength": 1, "maxLength": 100}},
              {"$ref": "#/components/parameters/PerPage"},
              {"$ref": "#/components/parameters/Page"}
            ],
            "responses": {
              "200": {"$ref": "#/components/responses/PhotoPage"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "429": {"$ref": "#/components/responses/UserLimited"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        },
        "/api/images/curated": {
          "get": {
            "summary": "Curated photos (suggestions before the user types)",
            "security": [{"bearer": []}],
            "parameters": [{"$ref": "#/components/parameters/PerPage"}, {"$ref": "#/components/parameters/Page"}],
            "responses": {
              "200": {"$ref": "#/components/responses/PhotoPage"},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "429": {"$ref": "#/components/responses/UserLimited"},
              "503": {"$ref": "#/components/responses/Unavailable"}
            }
          }
        }
      },
      "components": {
        "parameters": {
          "PerPage": {"name": "per_page", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 80, "default": 6}},
          "Page": {"name": "page", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1}}
        },
        "schemas": {
          "PhotoPage": {
            "type": "object",
            "required": ["page", "per_page", "total_results", "photos"],
            "properties": {
              "page": {"type": "integer"},
              "per_page": {"type": "integer"},
              "total_results": {"type": "integer"},
              "photos": {"type": "array", "items": {"$ref": "#/components/schemas/Photo"}},
              "next_page": {"type": "string", "description": "This service's route for the next page, relative to the base URL: /api/images/search?page=2&..."},
              "prev_page": {"type": "string", "description": "The same for the previous page"}
            }
          },
          "Photo": {
            "type": "object",
            "required": ["id", "width", "height", "url", "photographer", "photographer_url", "photographer_id", "src"],
            "properties": {
              "id": {"type": "integer"},
              "width": {"type": "integer"},
              "height": {"type": "integer"},
              "url": {"type": "string"},
              "photographer": {"type": "string"},
              "photographer_url": {"type": "string"},
              "photographer_id": {"type": "integer"},
              "avg_color": {"type": "string"},
              "liked": {"type": "boolean"},
              "alt": {"type": "string"},
              "src": {
                "type": "object",
                "required": ["original", "large2x", "large", "medium", "small", "portrait", "landscape", "tiny"],
                "properties": {
                  "original": {"type": "string"},
                  "large2x": {"type": "string"},
                  "large": {"type": "string"},
                  "medium": {"type": "string"},
                  "small": {"type": "string"},
                  "portrait": {"type": "string"},
                  "landscape": {"type": "string"},
                  "tiny": {"type": "string"}
                }
              }
            }
          }
        },
        "responses": {
          "PhotoPage": {
            "description": "A page of photos. When Pexels cannot be asked (no key, an error or timeout, the budget spent) and an older answer is cached, that answer, with the header Warning: 110 - \"Response is Stale\".",
            "headers": {"Warning": {"description": "Only on a stale answer", "schema": {"type": "string", "const": "110 - \"Response is Stale\""}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PhotoPage"}}}
          },
          "UserLimited": {
            "description": "The caller asked for more new (uncached) questions within an hour than one user may (30 by default), and nothing is cached for this one",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          },
          "Unavailable": {
            "description": "Pexels cannot be asked and nothing is cached: code not_configured (PEXELS_API_KEY is not set), upstream_timeout, upstream_unreachable, upstream_error, budget_spent or upstream_rate_limited; detail says which",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
          }
        }
      }
    }
    """#)

