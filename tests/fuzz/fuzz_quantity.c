/*
 * fuzz_quantity - mu_quantity_parse must never crash, and what it accepts
 * must survive a round trip: parse -> mu_quantity_format -> parse gives
 * the same value, for each unit (cpu: milli, memory: bytes, pods:
 * integer). A failed parse leaves *out untouched and names why.
 *
 * The input is the quantity text (cut at its first NUL, as a C string).
 *
 * With -DMU_FUZZ_ENGINE (and -fsanitize=fuzzer) libFuzzer drives it; without,
 * main() replays the files (or directories of files) named as arguments.
 */
#include "api/resource.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Longer than any int64 printed with a suffix. */
#define FUZZ_QTEXT 64

static const char *const names[] = {"cpu", "memory", "pods",
                                    "nvidia.com/gpu"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = mu_xmalloc(size + 1);
    char text[FUZZ_QTEXT];
    struct mu_err err;
    int64_t v, w;
    size_t i;

    memcpy(s, data, size);
    s[size] = '\0';
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        enum mu_qunit unit = mu_resource_unit(names[i]);

        v = 0x5a5a5a5a;
        if (mu_quantity_parse(s, unit, &v, &err) != 0) {
            if (v != 0x5a5a5a5a || !err.msg[0])
                abort();
            continue;
        }
        mu_quantity_format(names[i], v, text, sizeof(text));
        memset(&err, 0, sizeof(err));
        if (strlen(text) + 1 >= sizeof(text))
            abort();
        if (mu_quantity_parse(text, unit, &w, &err) != 0 || w != v) {
            fprintf(stderr, "%s: \"%s\" -> %lld -> \"%s\" -> %s\n",
                    names[i], s, (long long)v, text, err.msg);
            abort();
        }
    }
    free(s);
    return 0;
}
