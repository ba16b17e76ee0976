/* SPDX-License-Identifier: MIT */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "privdrop.h"

Test(privdrop, unknown_user_is_ex_nouser)
{
	char err[256];

	cr_assert_eq(privdrop_prepare("no-such-user-entropyd:root", err, sizeof err), EX_NOUSER);
	cr_expect_str_eq(err, "-D no-such-user-entropyd:root: unknown user no-such-user-entropyd");
	cr_expect_not(privdrop_prepared());
}

Test(privdrop, unknown_group_is_ex_nouser)
{
	char err[256];

	cr_assert_eq(privdrop_prepare("root:no-such-group-entropyd", err, sizeof err), EX_NOUSER);
	cr_expect_str_eq(err, "-D root:no-such-group-entropyd: unknown group no-such-group-entropyd");
	cr_expect_not(privdrop_prepared());
}

Test(privdrop, malformed_is_usage)
{
	char err[256];

	cr_expect_eq(privdrop_prepare("root", err, sizeof err), EX_USAGE);
	cr_expect_eq(privdrop_prepare(":root", err, sizeof err), EX_USAGE);
	cr_expect_eq(privdrop_prepare("a:b:c", err, sizeof err), EX_USAGE);
}

Test(privdrop, names_and_numbers_resolve)
{
	char err[256];

	cr_assert_eq(privdrop_prepare("root:0", err, sizeof err), 0, "%s", err);
	cr_expect(privdrop_prepared());
}

Test(privdrop, numeric_ids_without_names)
{
	char err[256];

	cr_assert_eq(privdrop_prepare("4000000001:4000000002", err, sizeof err), 0, "%s", err);
}

/* Without a prepared drop, the socket is left alone. */
Test(privdrop, socket_owner_without_drop_is_a_no_op)
{
	cr_expect_eq(privdrop_socket_owner("/nonexistent/entropyd.sock"), 0);
}

/* The control socket goes to the daemon's user and group, mode 0660. */
Test(privdrop, socket_owner_hands_the_socket_over)
{
	char dir[] = "/tmp/entropyd-privdrop.XXXXXX", err[256];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct passwd *pw;
	struct group *gr;
	struct stat st;
	int fd;

	if (geteuid() != 0)
		cr_skip_test("changing a socket's owner needs root");
	if ((pw = getpwnam("nobody")) == NULL || (gr = getgrnam("nogroup")) == NULL)
		cr_skip_test("no user nobody or group nogroup");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s/s", dir);
	cr_assert_neq(fd = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	cr_assert_eq(privdrop_prepare("nobody:nogroup", err, sizeof err), 0, "%s", err);
	cr_assert_eq(privdrop_socket_owner(sun.sun_path), 0);
	cr_assert_eq(stat(sun.sun_path, &st), 0);
	cr_expect_eq(st.st_uid, pw->pw_uid);
	cr_expect_eq(st.st_gid, gr->gr_gid);
	cr_expect_eq(st.st_mode & 07777, 0660);
	close(fd);
	unlink(sun.sun_path);
	rmdir(dir);
}
