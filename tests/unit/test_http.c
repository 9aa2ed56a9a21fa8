/* test_http.c: the HTTP front's route table (service/http.h) is the API
 * that service/api.json describes: every route of srv_routes() is in
 * api.json with the same method, path and auth, and every route of
 * api.json is in the table; no route twice in either. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "service/http.h"
#include "testutil.h"

static json_t *load_api(void)
{
    char path[1024];
    tu_path(path, sizeof path, "service/api.json");
    json_error_t je;
    json_t *v = json_load_file(path, 0, &je);
    if (!v)
        fail_msg("%s:%d:%d: %s", path, je.line, je.column, je.text);
    assert_string_equal(json_string_value(json_object_get(v, "format")),
                        "efplan-api");
    assert_true(json_is_array(json_object_get(v, "routes")));
    return v;
}

static const char *str_of(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    if (!s)
        fail_msg("api.json: a route without a string \"%s\"", k);
    return s;
}

/* The route of api.json with this method and path, or NULL. */
static const json_t *api_find(const json_t *routes, const char *method,
                              const char *path)
{
    size_t i;
    const json_t *r;
    json_array_foreach(routes, i, r) {
        if (strcmp(str_of(r, "method"), method) == 0 &&
            strcmp(str_of(r, "path"), path) == 0)
            return r;
    }
    return NULL;
}

static void test_table_in_api(void **state)
{
    (void)state;
    json_t *api = load_api();
    const json_t *routes = json_object_get(api, "routes");
    int n = 0;
    const srv_route *t = srv_routes(&n);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        const json_t *r = api_find(routes, t[i].method, t[i].path);
        if (!r)
            fail_msg("srv_routes: %s %s is not in service/api.json",
                     t[i].method, t[i].path);
        if (strcmp(str_of(r, "auth"), t[i].auth) != 0)
            fail_msg("%s %s: auth \"%s\" in srv_routes, \"%s\" in "
                     "api.json", t[i].method, t[i].path, t[i].auth,
                     str_of(r, "auth"));
        for (int k = 0; k < i; k++)
            if (strcmp(t[k].method, t[i].method) == 0 &&
                strcmp(t[k].path, t[i].path) == 0)
                fail_msg("srv_routes: %s %s twice", t[i].method,
                         t[i].path);
    }
    json_decref(api);
}

static void test_api_in_table(void **state)
{
    (void)state;
    json_t *api = load_api();
    const json_t *routes = json_object_get(api, "routes");
    int n = 0;
    const srv_route *t = srv_routes(&n);
    size_t i;
    const json_t *r;
    json_array_foreach(routes, i, r) {
        const char *m = str_of(r, "method"), *p = str_of(r, "path");
        int found = 0;
        for (int k = 0; k < n; k++)
            found += strcmp(t[k].method, m) == 0 && strcmp(t[k].path, p) == 0;
        if (found != 1)
            fail_msg("service/api.json: %s %s is in srv_routes %d times "
                     "(expected once)", m, p, found);
        if (api_find(routes, m, p) != r)
            fail_msg("service/api.json: %s %s twice", m, p);
    }
    assert_int_equal((int)json_array_size(routes), n);
    json_decref(api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_in_api),
        cmocka_unit_test(test_api_in_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
