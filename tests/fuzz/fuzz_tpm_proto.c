/* SPDX-License-Identifier: MIT */
/* libFuzzer: TPM 2.0 and 1.2 response parsing (sources/tpm_proto.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tpm_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Byte 0 picks the family and how many bytes were asked; the rest is the answer. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum tpm_proto_version v;
	struct tpm_proto_response r;
	char err[256], name[64];
	size_t asked;
	uint8_t *resp;

	if (size < 1)
		return 0;
	v = data[0] & 1 ? TPM_PROTO_V12 : TPM_PROTO_V2;
	asked = 1 + (data[0] >> 1);
	/* A private copy of exactly the answer's length, so ASan sees overreads. */
	resp = malloc(size - 1 + 1);
	memcpy(resp, data + 1, size - 1);
	(void)tpm_proto_announced_size(resp, size - 1);
	if (tpm_proto_parse_header(v, resp, size - 1, &r, err, sizeof err) == TPM_PROTO_OK)
		(void)tpm_proto_rc_name(v, r.rc, name, sizeof name);
	memset(&r, 0, sizeof r);
	if (tpm_proto_parse_get_random(v, resp, size - 1, asked, &r, err, sizeof err) ==
	    TPM_PROTO_OK) {
		/* What is handed on lies inside the answer and is no more than asked. */
		if (r.len == 0 || r.len > asked || r.data < resp ||
		    r.data + r.len > resp + size - 1)
			abort();
	}
	(void)tpm_proto_rc_kind(v, r.rc);
	free(resp);
	return 0;
}
