/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "control_socket.h"

const char *
control_socket_default(void)
{
	const char *s = getenv(CONTROL_SOCKET_ENV);

	return s != NULL && s[0] != '\0' ? s : RUNDIR "/entropyd.sock";
}
