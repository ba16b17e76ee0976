/* SPDX-License-Identifier: MIT */
/*
 * Where the control socket is by default: $ENTROPYD_CONTROL_SOCKET, else
 * the runtime directory's entropyd.sock (the daemon and entropyctl agree).
 */
#include <stdlib.h>

#include "control_socket.h"

const char *
control_socket_default(void)
{
	const char *s = getenv(CONTROL_SOCKET_ENV);

	return s != NULL && s[0] != '\0' ? s : RUNDIR "/entropyd.sock";
}
