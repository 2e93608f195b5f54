import PostlyService

/// The auth service's OpenAPI 3.1 document, served at `/openapi.json`.
let openAPI = OpenAPIDocument(
    #"""
    {
      "openapi": "3.1.0",
      "info": {
        "title": "Postly auth service",
        "version": "1.0.0",
        "description": "Accounts, sign-in with email or Google, sessions that can be revoked everywhere, and the public keys that verify access tokens. Failed email logins are limited per client address and per email (429 with Retry-After), counted in the database; password hashes queue, and a full queue answers 503."
      },
      "paths": {
        "/internal/import/users": {
          "post": {
            "summary": "Import users of an earlier deployment (postly-import)",
            "description": "Internal: served on this service's port only when POSTLY_IMPORT_TOKEN is set, never routed by the gateway. Insert-only by userId: a user already there is counted as existing and left untouched; one whose email or Google account another user holds is rejected. Each created user emits user.registered with imported: true. passwordHash is kept as the earlier deployment wrote it (Werkzeug scrypt or pbkdf2); the first login with it replaces it with bcrypt.",
            "x-internal": true,
            "security": [{"importToken": []}],
            "requestBody": {"required": true, "content": {"application/json": {"schema": {
              "type": "object", "required": ["users"],
              "properties": {"users": {"type": "array", "maxItems": 500, "items": {
                "type": "object", "required": ["userId", "name", "email", "createdAt"],
                "properties": {"userId": {"type": "string"}, "name": {"type": "string"}, "email": {"type": "string"},
                  "passwordHash": {"type": ["string", "null"]}, "googleSubject": {"type": ["string", "null"]},
                  "profilePicture": {"type": ["string", "null"]}, "createdAt": {"type": "string", "format": "date-time"},
                  "lastLogin": {"type": ["string", "null"], "format": "date-time"}}}}}}}}},
            "responses": \#(importRouteResponses)
          }
        },
        "/api/auth/register": {
          "post": {
            "summary": "Create an email-password account and sign in",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RegisterRequest"}}}},
            "responses": {
              "201": {
                "description": "Created; Location is /api/auth/check",
                "headers": {"Location": {"schema": {"type": "string"}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthSession"}}}
              },
              "400": {"$ref": "#/components/responses/Problem"},
              "409": {"$ref": "#/components/responses/Problem"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "503": {
                "description": "Too many password hashes waiting (a flood of sign-ins); try again after Retry-After",
                "headers": {"Retry-After": {"schema": {"type": "integer"}}},
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
              }
            }
          }
        },
        "/api/auth/login/email": {
          "post": {
            "summary": "Sign in with email and password",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmailLoginRequest"}}}},
            "responses": {
              "200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthSession"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {
                "description": "Unknown email or wrong password (one message for both)",
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
              },
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "429": {
                "description": "Too many failed logins from this client, or for this email (from any client, the right password too)",
                "headers": {"Retry-After": {"schema": {"type": "integer"}}},
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
              },
              "503": {
                "description": "Too many password hashes waiting (a flood of sign-ins); try again after Retry-After",
                "headers": {"Retry-After": {"schema": {"type": "integer"}}},
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
              }
            }
          }
        },
        "/api/auth/login": {
          "post": {
            "summary": "Sign in with a Google ID token; creates the user on first sign-in, links an account with the same verified email (its password then stops working and its other sessions are revoked)",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GoogleLoginRequest"}}}},
            "responses": {
              "200": {"description": "Signed in", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthSession"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {
                "description": "Bad signature, unknown key, wrong issuer or audience, expired, or unverified email",
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
              },
              "409": {
                "description": "account_conflict: the email's account is linked to another Google account; nothing changed",
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
              },
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"},
              "503": {
                "description": "The issuer's keys cannot be fetched",
                "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
              }
            }
          }
        },
        "/api/auth/refresh": {
          "post": {
            "summary": "Trade a refresh token for a new pair; the old one is spent: presented again within 10 s it answers the same pair once (a retry, a second tab), any later use revokes the whole session",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RefreshRequest"}}}},
            "responses": {
              "200": {"description": "A new pair", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthSession"}}}},
              "400": {"$ref": "#/components/responses/Problem"},
              "401": {"$ref": "#/components/responses/Problem"},
              "413": {"$ref": "#/components/responses/Problem"},
              "415": {"$ref": "#/components/responses/Problem"},
              "422": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/auth/logout": {
          "post": {
            "summary": "Revoke the caller's session on every service",
            "security": [{"bearer": []}],
            "responses": {
              "200": {"description": "Logged out", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}},
              "401": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/auth/check": {
          "get": {
            "summary": "The caller's user",
            "security": [{"bearer": []}],
            "responses": {
              "200": {"description": "The user", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}},
              "401": {"$ref": "#/components/responses/Problem"}
            }
          }
        },
        "/api/auth/jwks": {
          "get": {
            "summary": "The public keys (Ed25519, alg EdDSA, with kid) that verify access tokens",
            "responses": {"200": {"description": "JSON Web Key Set", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JWKS"}}}}}
          }
        }
      },
      "components": {
        "schemas": {
          "RegisterRequest": {
            "type": "object",
            "required": ["name", "email", "password"],
            "properties": {
              "name": {"type": "string", "minLength": 1, "maxLength": 100},
              "email": {"type": "string", "format": "email", "description": "trimmed, case-insensitive"},
              "password": {"type": "string", "minLength": 8, "maxLength": 1000, "description": "without NUL; every byte counts"}
            }
          },
          "EmailLoginRequest": {"type": "object", "required": ["email", "password"], "properties": {"email": {"type": "string"}, "password": {"type": "string"}}},
          "GoogleLoginRequest": {"type": "object", "required": ["token"], "properties": {"token": {"type": "string", "description": "Google ID token"}}},
          "RefreshRequest": {"type": "object", "required": ["refreshToken"], "properties": {"refreshToken": {"type": "string"}}},
          "AuthSession": {
            "type": "object",
            "required": ["accessToken", "refreshToken", "user"],
            "properties": {
              "accessToken": {"type": "string", "description": "JWT, EdDSA; claims sub, sid, iat, exp, iss, aud (postly), name"},
              "refreshToken": {"type": "string", "description": "opaque, single use"},
              "tokenType": {"type": "string", "const": "Bearer"},
              "expiresIn": {"type": "integer", "description": "seconds until the access token expires"},
              "user": {"$ref": "#/components/schemas/User"}
            }
          },
          "User": {
            "type": "object",
            "required": ["userId", "name", "email", "profilePicture", "createdAt", "lastLogin"],
            "properties": {
              "userId": {"type": "string"},
              "name": {"type": "string"},
              "email": {"type": "string"},
              "profilePicture": {"type": ["string", "null"]},
              "createdAt": {"type": "string", "format": "date-time", "description": "RFC 3339 UTC, milliseconds"},
              "lastLogin": {"type": ["string", "null"], "format": "date-time"}
            }
          },
          "JWKS": {
            "type": "object",
            "required": ["keys"],
            "properties": {
              "keys": {
                "type": "array",
                "items": {
                  "type": "object",
                  "properties": {"kty": {"const": "OKP"}, "crv": {"const": "Ed25519"}, "alg": {"const": "EdDSA"}, "kid": {"type": "string"}, "x": {"type": "string"}}
                }
              }
            }
          }
        }
      }
    }
    """#)

