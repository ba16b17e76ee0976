/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "log.h"

int
main(int argc, char **argv)
{
	log_init("entropyd", LOG_TO_STDERR, 0);
	return EXIT_SUCCESS;
}
