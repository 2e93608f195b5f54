#pragma once
#include <libpq-fe.h>
#include <openssl/ssl.h>

/// Bytes TLS has read and decrypted that libpq has not taken yet, which a poll() of the socket
/// cannot see; 0 without TLS.
static inline int postly_tls_pending(PGconn *connection) {
    SSL *ssl = PQsslStruct(connection, "OpenSSL");
    return ssl ? SSL_pending(ssl) : 0;
}
