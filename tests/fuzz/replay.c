/*
 * replay.c - the main() of every fuzz target when no fuzzing engine is
 * linked: runs LLVMFuzzerTestOneInput over each file given, or every file
 * in each directory given (the seed corpus), so the corpus is a test.
 */
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/mu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
