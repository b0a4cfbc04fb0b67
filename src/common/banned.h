/*
 * banned.h - functions muster does not call (git's list). Using one is a
 * compile error naming the function.
 */
#ifndef MU_COMMON_BANNED_H
#define MU_COMMON_BANNED_H

#define MU_BANNED(func) sorry_##func##_is_banned_in_muster

#undef strcpy
#define strcpy(x, y) MU_BANNED(strcpy)
#undef strcat
#define strcat(x, y) MU_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) MU_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) MU_BANNED(strncat)
#undef strtok
#define strtok(x, y) MU_BANNED(strtok)
#undef sprintf
#define sprintf(...) MU_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) MU_BANNED(vsprintf)
#undef gmtime
#define gmtime(t) MU_BANNED(gmtime)
#undef localtime
#define localtime(t) MU_BANNED(localtime)
#undef ctime
#define ctime(t) MU_BANNED(ctime)
#undef asctime
#define asctime(t) MU_BANNED(asctime)
#undef atoi
#define atoi(s) MU_BANNED(atoi)
#undef atol
#define atol(s) MU_BANNED(atol)

#endif
