/* jsonin.c: JSON loading with positions and strict keys (see jsonin.h). */
#include "common/jsonin.h"

#include <inttypes.h>
#include <string.h>

#include "common/util.h"

json_t *jsonin_parse(const char *file, const char *buf, size_t len,
                     ef_err *e)
{
    size_t i = ef_bom_len(buf, len); /* a byte order mark is harmless */
    size_t j = i;
    while (j < len && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\n' ||
                       buf[j] == '\r'))
        j++;
    if (j == len) {
        ef_fail(e, EF_E_INPUT, "%s: empty file (expected a JSON object)",
                file);
        return NULL;
    }
    /* jansson stops at a NUL byte as if the text ended there ("end of
     * file expected near end of file"); name the byte instead. Columns
     * count characters, as jansson's do. */
    const char *nul = memchr(buf + i, '\0', len - i);
    if (nul) {
        int line = 1, col = 1;
        for (const char *p = buf + i; p < nul; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else if (((unsigned char)*p & 0xC0) != 0x80) {
                col++;
            }
        }
        ef_fail(e, EF_E_INPUT, "%s:%d:%d: NUL byte in input (is this a text "
                "file?)", file, line, col);
        return NULL;
    }
    json_error_t err;
    json_t *root = json_loadb(buf + i, len - i, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        int col = err.column > 0 ? err.column : 1;
        /* jansson names its own flag here; say what is wrong instead. */
        if (strstr(err.text, "JSON_ALLOW_NUL")) {
            ef_fail(e, EF_E_INPUT, "%s:%d:%d: JSON syntax: \\u0000 (a NUL "
                    "character) in a string (expected text without NUL)",
                    file, err.line > 0 ? err.line : 1, col);
            return NULL;
        }
        /* jansson quotes the offending token verbatim ("invalid token
         * near '\x02'"): escape control bytes so the message stays one
         * printable line. */
        char text[4 * JSON_ERROR_TEXT_LENGTH];
        size_t o = 0;
        for (const char *p = err.text; *p && o + 5 < sizeof text; p++) {
            unsigned char c = (unsigned char)*p;
            if (c < 0x20 || c == 0x7f)
                o += (size_t)snprintf(text + o, sizeof text - o, "\\x%02x", c);
            else
                text[o++] = (char)c;
        }
        text[o] = '\0';
        /* Columns of line 1 count the skipped BOM's absence: same text. */
        ef_fail(e, EF_E_INPUT, "%s:%d:%d: JSON syntax: %s", file,
                err.line > 0 ? err.line : 1, col, text);
        return NULL;
    }
    return root;
}

const char *jsonin_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
    }
    return "a value";
}

static const char *sep(const char *where)
{
    return where[0] ? "." : "";
}

int jsonin_check_keys(const json_t *obj, const char *const *allowed, int n,
                      const char *file, const char *where, ef_err *e)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        int ok = 0;
        for (int i = 0; i < n && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (ok)
            continue;
        char q[128], list[512] = "";
        size_t o = 0;
        for (int i = 0; i < n && o < sizeof list; i++)
            o += (size_t)snprintf(list + o, sizeof list - o, "%s%s",
                                  i ? ", " : "", allowed[i]);
        const char *s = ef_suggest(key, allowed, n);
        if (s)
            return ef_fail(e, EF_E_INPUT,
                           "%s: %s%sunknown key \"%s\" (did you mean \"%s\"?)",
                           file, where, where[0] ? ": " : "",
                           ef_quote(key, q, sizeof q), s);
        return ef_fail(e, EF_E_INPUT,
                       "%s: %s%sunknown key \"%s\" (expected one of: %s)", file,
                       where, where[0] ? ": " : "", ef_quote(key, q, sizeof q),
                       list);
    }
    return EF_OK;
}

int jsonin_int(const json_t *obj, const char *key, int required,
               int64_t min, int64_t max, int64_t *out, const char *file,
               const char *where, ef_err *e)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return ef_fail(e, EF_E_INPUT, "%s: %s%smissing required key \"%s\"",
                           file, where, where[0] ? ": " : "", key);
        return 0;
    }
    if (!json_is_integer(v)) {
        if (json_is_real(v)) {
            double d = json_real_value(v);
            return ef_fail(e, EF_E_INPUT,
                           "%s: %s%s%s: expected an integer, got %g", file,
                           where, sep(where), key, d);
        }
        return ef_fail(e, EF_E_INPUT, "%s: %s%s%s: expected an integer, got %s",
                       file, where, sep(where), key, jsonin_type(v));
    }
    json_int_t x = json_integer_value(v);
    if (x < min || x > max)
        return ef_fail(e, EF_E_INPUT,
                       "%s: %s%s%s: %" PRId64 " is out of range (expected %"
                       PRId64 "..%" PRId64 ")",
                       file, where, sep(where), key, (int64_t)x, min, max);
    *out = (int64_t)x;
    return 1;
}

int jsonin_str(const json_t *obj, const char *key, int required,
               const char **out, const char *file, const char *where,
               ef_err *e)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return ef_fail(e, EF_E_INPUT, "%s: %s%smissing required key \"%s\"",
                           file, where, where[0] ? ": " : "", key);
        return 0;
    }
    if (!json_is_string(v))
        return ef_fail(e, EF_E_INPUT, "%s: %s%s%s: expected a string, got %s",
                       file, where, sep(where), key, jsonin_type(v));
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0)
        return ef_fail(e, EF_E_INPUT, "%s: %s%s%s: must not be empty", file,
                       where, sep(where), key);
    if (n > 255)
        return ef_fail(e, EF_E_INPUT,
                       "%s: %s%s%s: too long (%zu bytes; at most 255)", file,
                       where, sep(where), key, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20)
            return ef_fail(e, EF_E_INPUT,
                           "%s: %s%s%s: control character in string", file,
                           where, sep(where), key);
    *out = s;
    return 1;
}
