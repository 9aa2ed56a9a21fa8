/*
 * token.h: bearer tokens (token_*), made and checked with libsodium.
 *
 * A token's text is "efp_" ID "_" SECRET: ID is TOKEN_ID_LEN characters
 * of [a-z0-9] (public: it names the token in lists, logs and revocation),
 * SECRET 43 characters of URL-safe base64 without padding (32 random
 * bytes from randombytes_buf). The store keeps ID, a random 16-byte salt
 * and BLAKE2b-256 (crypto_generichash) of SECRET keyed by the salt; a
 * check recomputes the hash and compares it with sodium_memcmp, so its
 * time does not depend on where the hashes differ. The secret is never
 * stored, logged or put into an error message.
 */
#ifndef EF_TOKEN_H
#define EF_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define TOKEN_ID_LEN 10
#define TOKEN_SALT_LEN 16
#define TOKEN_HASH_LEN 32
#define TOKEN_TEXT_MAX 64
#define TOKEN_NAME_MAX 64
#define TOKEN_NAME_RULE "1 to 64 characters of [A-Za-z0-9._-], not starting " \
                        "with '.' or '-'"

/* Initialise libsodium once (thread-safe to call again): 0, or -1 when
 * it cannot start. */
int token_init(void);

/* A user name: NULL when 'name' follows TOKEN_NAME_RULE, else what is
 * wrong, a static phrase ("empty", "too long", "starts with '.'",
 * "contains a space", ...) that never repeats the name. */
const char *token_name_check(const char *name);

/* A Unix account name a token may map to (efplan token add --unix-user):
 * NULL when 'name' is 1 to TOKEN_UNIX_MAX characters of [A-Za-z0-9._-]
 * not starting with '-' (the portable user names of POSIX), else what is
 * wrong, a static phrase that never repeats the name. Whether the account
 * exists is the caller's question (getpwnam). */
#define TOKEN_UNIX_MAX 32
#define TOKEN_UNIX_RULE "1 to 32 characters of [A-Za-z0-9._-], not " \
                        "starting with '-'"
const char *token_unix_user_check(const char *name);

/* Make a token: its text into text[TOKEN_TEXT_MAX + 1], its public id
 * into id[TOKEN_ID_LEN + 1], salt and hash into the given arrays
 * (TOKEN_SALT_LEN, TOKEN_HASH_LEN bytes). Calls token_init; a libsodium
 * that cannot start is an ef_panic (the caller ran token_init first). */
void token_make(char *text, char *id, unsigned char *salt,
                unsigned char *hash);

/* Split a token's text: 0 and its id into id[TOKEN_ID_LEN + 1] when it
 * has the form above (the secret the one encoding of 32 bytes: its last
 * character's unused bits zero), -1 when not. */
int token_parse(const char *text, char *id);

/* 1 if 'text' is the token whose salt and hash are given, else 0
 * (constant-time in the hash). */
int token_verify(const char *text, const unsigned char *salt,
                 const unsigned char *hash);

/* Overwrite n bytes at p with zeros (sodium_memzero: not optimised
 * away); for a token's text once it has been used. */
void token_wipe(void *p, size_t n);

#endif
