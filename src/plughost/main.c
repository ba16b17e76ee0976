/* SPDX-License-Identifier: MIT */
/*
 * entropyd-plugin: the processes that run drop-in source plugins for
 * entropyd, one per plugin, and the launcher that starts them. Started by
 * the daemon only; see child.h and launcher.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "child.h"
#include "launcher.h"

#ifdef ENTROPYD_SANITIZED
/*
 * LeakSanitizer stops the world with ptrace, which a plugin host's seccomp
 * list refuses: the hosts run without the leak check (AddressSanitizer's
 * other checks stay on).
 */
int __lsan_is_turned_off(void);
int
__lsan_is_turned_off(void)
{
	return 1;
}
#endif

/* A decimal id from the command line; -1 when it is not one. */
static long long
main_id(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < 0 || v >= UINT_MAX)
		return -1;
	return v;
}

int
main(int argc, char **argv)
{
	long long uid, gid;

	if (argc == 2 && strcmp(argv[1], "--launcher") == 0)
		return launcher_main(3, argv[0]);
	if (argc == 4 && strcmp(argv[1], "--host") == 0 && (uid = main_id(argv[2])) != -1 &&
	    (gid = main_id(argv[3])) != -1)
		return child_main(3, 4, (uid_t)uid, (gid_t)gid);
	fprintf(stderr, "entropyd-plugin: started by entropyd only "
	    "(--launcher, or --host UID GID with fds 3 and 4)\n");
	return EX_USAGE;
}
