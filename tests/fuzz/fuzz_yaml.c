/*
 * fuzz_yaml - mu_yaml_parse() must not crash, leak or hand back a document
 * that jansson cannot serialise, and must leave docs empty on failure.
 *
 * With -DMU_FUZZ_ENGINE (and -fsanitize=fuzzer) libFuzzer drives it; without,
 * main() replays the files (or directories of files) named as arguments.
 */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>

#include "api/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mu_yaml_docs d;
    struct mu_err err;
    char text[64];
    double v;
    size_t i;

    mu_yaml_docs_init(&d);
    if (mu_yaml_parse("fuzz", (const char *)data, size, &d, &err) != 0 &&
        d.n != 0)
        abort();
    for (i = 0; i < d.n; i++) {
        char *s = json_dumps(d.v[i].root, JSON_ENCODE_ANY);

        if (!s || d.v[i].line < 1)
            abort();
        free(s);
    }
    mu_yaml_docs_release(&d);

    if (size >= sizeof(v)) {
        memcpy(&v, data, sizeof(v));
        mu_json_real_text(v, text, sizeof(text));
        if (isfinite(v) && strtod(text, NULL) != v)
            abort();
    }
    return 0;
}
