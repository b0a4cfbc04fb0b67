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

#ifndef MU_FUZZ_ENGINE
static int replay_file(const char *path)
{
    struct mu_sb sb;
    char chunk[4096];
    size_t n;
    FILE *f = fopen(path, "rb");

    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    mu_sb_init(&sb);
    mu_sb_addn(&sb, "", 0);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        mu_sb_addn(&sb, chunk, n);
    fclose(f);
    LLVMFuzzerTestOneInput((const uint8_t *)sb.buf, sb.len);
    mu_sb_release(&sb);
    return 0;
}

static int replay(const char *path, int *count)
{
    struct stat st;
    struct dirent *e;
    DIR *dir;
    int rc = 0;

    if (stat(path, &st) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    dir = opendir(path);
    if (!dir) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    while (!rc && (e = readdir(dir))) {
        char *sub;

        if (e->d_name[0] == '.')
            continue;
        sub = mu_xasprintf("%s/%s", path, e->d_name);
        rc = replay(sub, count);
        free(sub);
    }
    closedir(dir);
    return rc;
}

int main(int argc, char **argv)
{
    int i, count = 0;

    for (i = 1; i < argc; i++)
        if (replay(argv[i], &count) != 0)
            return EXIT_FAILURE;
    printf("replayed %d inputs\n", count);
    return count ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif
