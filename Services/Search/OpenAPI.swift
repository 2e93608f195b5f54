import PostlyService

/// The search service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPI = OpenAPIDocument(
    #"""
    {
      "openapi": "3.1.0",
      "info": {"title": "Postly search service", "version": "1.0.0"},
      "paths": {
        "/api/posts/search": {
          "get": {
            "summary": "Published posts matching a text, best match first",
            "description": "q is text, never syntax: any character is searched for or ignored. Title, content and author name are searched, accents folded, English words by their stem; each word of 5 letters or more may have one typo (substitution, insertion, deletion or swap of neighbours), of 9 letters or more two; the last word also matches the words it begins. Ranking: more of the words matched, words in the title, words matched exactly, then the newest. A bare array (without page and limit, the first 20); X-Total-Count carries the number of all matches. Results are listed posts: contentHtml only with formats=html; views is 0 (no event carries views).",
            "parameters": [
              {
                "name": "q",
                "in": "query",
                "required": true,
                "schema": {"type": "string", "minLength": 1, "maxLength": 200},
                "description": "1 to 200 characters after trimming"
              },
              {"name": "page", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "default": 1}},
              {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}},
              {
                "name": "formats",
                "in": "query",
                "required": false,
                "schema": {"type": "string"},
                "description": "Comma-separated; html adds contentHtml to each result. Other names are ignored."
              }
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
        }
      },
      "components": {
        "schemas": {
          "SearchResult": {
            "description": "A post as lists show it (published only; contentHtml only with formats=html), with its highlights",
            "allOf": [
              {"$ref": "#/components/schemas/ListedPost"},
              {
                "type": "object",
                "required": ["highlights"],
                "properties": {
                  "status": {"const": "published"},
                  "highlights": {
                    "type": "object",
                    "required": ["title", "excerpt"],
                    "description": "Plain text, HTML-escaped, the matched words in <mark>...</mark>",
                    "properties": {"title": {"type": "string"}, "excerpt": {"type": "string"}}
                  }
                }
              }
            ]
          }
        }
      }
    }
    """#)

