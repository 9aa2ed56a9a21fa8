/* token.c: bearer tokens (token.h), made and checked with libsodium. */
#include "service/token.h"

#include <string.h>

#include <sodium.h>

#include "common/err.h"

#define TOKEN_PREFIX "efp_"
#define TOKEN_PREFIX_LEN 4
#define TOKEN_SECRET_BYTES 32
#define TOKEN_SECRET_LEN 43 /* base64 of 32 bytes, no padding */
/* "efp_" ID "_" SECRET */
#define TOKEN_TEXT_LEN (TOKEN_PREFIX_LEN + TOKEN_ID_LEN + 1 + TOKEN_SECRET_LEN)

_Static_assert(TOKEN_TEXT_LEN <= TOKEN_TEXT_MAX, "token text too long");
_Static_assert(sodium_base64_ENCODED_LEN(TOKEN_SECRET_BYTES,
               sodium_base64_VARIANT_URLSAFE_NO_PADDING) ==
               TOKEN_SECRET_LEN + 1, "secret length");

static const char id_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";

int token_init(void)
{
    /* sodium_init is thread-safe and returns 1 once already done */
    return sodium_init() < 0 ? -1 : 0;
}

/* What is wrong with 'name' as a name of [A-Za-z0-9._-] of at most 'max'
 * bytes not starting with '-' (nor with '.' unless dot_first): a phrase,
 * or NULL when it is fine. */
static const char *name_problem(const char *name, size_t max, int dot_first)
{
    if (!name || !name[0])
        return "empty";
    size_t n = strlen(name);
    if (n > max)
        return "too long";
    if (name[0] == '.' && !dot_first)
        return "starts with '.'";
    if (name[0] == '-')
        return "starts with '-'";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
            continue;
        if (c == ' ')
            return "contains a space";
        if (c == '/')
            return "contains '/'";
        if (c < 0x20 || c == 0x7f)
            return "contains a control character";
        if (c >= 0x80)
            return "contains a non-ASCII character";
        return "contains a character other than [A-Za-z0-9._-]";
    }
    return NULL;
}

const char *token_name_check(const char *name)
{
    return name_problem(name, TOKEN_NAME_MAX, 0);
}

const char *token_unix_user_check(const char *name)
{
    return name_problem(name, TOKEN_UNIX_MAX, 1);
}

void token_make(char *text, char *id, unsigned char *salt,
                unsigned char *hash)
{
    if (token_init() != 0)
        ef_panic("libsodium cannot start");
    for (int i = 0; i < TOKEN_ID_LEN; i++)
        id[i] = id_chars[randombytes_uniform(sizeof id_chars - 1)];
    id[TOKEN_ID_LEN] = '\0';

    unsigned char secret[TOKEN_SECRET_BYTES];
    randombytes_buf(secret, sizeof secret);
    randombytes_buf(salt, TOKEN_SALT_LEN);

    char *p = text;
    memcpy(p, TOKEN_PREFIX, TOKEN_PREFIX_LEN);
    p += TOKEN_PREFIX_LEN;
    memcpy(p, id, TOKEN_ID_LEN);
    p += TOKEN_ID_LEN;
    *p++ = '_';
    sodium_bin2base64(p, TOKEN_SECRET_LEN + 1, secret, sizeof secret,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(secret, sizeof secret);
    crypto_generichash(hash, TOKEN_HASH_LEN, (const unsigned char *)p,
                       TOKEN_SECRET_LEN, salt, TOKEN_SALT_LEN);
}

static int is_b64url(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int token_parse(const char *text, char *id)
{
    if (!text || strncmp(text, TOKEN_PREFIX, TOKEN_PREFIX_LEN) != 0)
        return -1;
    const char *p = text + TOKEN_PREFIX_LEN;
    for (int i = 0; i < TOKEN_ID_LEN; i++) {
        unsigned char c = (unsigned char)p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return -1;
    }
    if (p[TOKEN_ID_LEN] != '_')
        return -1;
    const char *sec = p + TOKEN_ID_LEN + 1;
    for (int i = 0; i < TOKEN_SECRET_LEN; i++)
        if (!is_b64url((unsigned char)sec[i]))
            return -1;
    if (sec[TOKEN_SECRET_LEN] != '\0')
        return -1;
    /* 43 characters carry 258 bits: the last one's low 2 bits must be 0
     * for the text to be the one encoding of 32 bytes */
    unsigned char bin[TOKEN_SECRET_BYTES];
    size_t len = 0;
    int bad = sodium_base642bin(bin, sizeof bin, sec, TOKEN_SECRET_LEN, NULL,
                                &len, NULL,
                                sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(bin, sizeof bin);
    if (bad != 0 || len != TOKEN_SECRET_BYTES)
        return -1;
    memcpy(id, p, TOKEN_ID_LEN);
    id[TOKEN_ID_LEN] = '\0';
    return 0;
}

int token_verify(const char *text, const unsigned char *salt,
                 const unsigned char *hash)
{
    char id[TOKEN_ID_LEN + 1];
    if (token_parse(text, id) != 0)
        return 0;
    if (token_init() != 0)
        return 0;
    const char *sec = text + TOKEN_PREFIX_LEN + TOKEN_ID_LEN + 1;
    unsigned char h[TOKEN_HASH_LEN];
    crypto_generichash(h, sizeof h, (const unsigned char *)sec,
                       TOKEN_SECRET_LEN, salt, TOKEN_SALT_LEN);
    int ok = sodium_memcmp(h, hash, TOKEN_HASH_LEN) == 0;
    sodium_memzero(h, sizeof h);
    return ok;
}

void token_wipe(void *p, size_t n)
{
    sodium_memzero(p, n);
}
