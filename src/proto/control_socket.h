/* SPDX-License-Identifier: MIT */
#ifndef ENTROPYD_CONTROL_SOCKET_H
#define ENTROPYD_CONTROL_SOCKET_H

/* Names the control socket for entropyd and entropyctl when none is given. */
#define CONTROL_SOCKET_ENV "ENTROPYD_CONTROL_SOCKET"

/* The control socket when none is given: $ENTROPYD_CONTROL_SOCKET, else RUNDIR's. */
const char *control_socket_default(void);

#endif
