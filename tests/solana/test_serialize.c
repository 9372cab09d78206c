/*
 * The aligned input serialization against layouts computed by hand from agave's
 * serialize_parameters_aligned, and the runtime's checks on deserialization.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "solana/serialize.h"

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

struct world {
	struct sol_account acc[2];
	uint8_t program[32];
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	memset(w->program, 0xaa, 32);
	for (int i = 0; i < 2; i++) {
		memset(w->acc[i].key, i + 1, 32);
		memcpy(w->acc[i].owner, w->program, 32);
		w->acc[i].lamports = 1000 + i;
		w->acc[i].rent_epoch = 7;
	}
	w->acc[0].len = 3;
	w->acc[0].data = malloc(3);
	memcpy(w->acc[0].data, "\x01\x02\x03", 3);
	w->acc[1].owner[0] = 0xbb; /* not owned by the program */
}

static void world_free(struct world *w)
{
	for (int i = 0; i < 2; i++)
		free(w->acc[i].data);
}

static const struct sol_ix_account ix3[] = { { 0, true, true }, { 1, false, true },
					      { 0, true, true } };

static void test_layout(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	struct sol_input in;
	const char *ierr;
	assert_int_equal(sol_serialize(w.acc, ix3, 3, (const uint8_t *)"hi", 2, w.program, true, &in,
					&ierr), 0);
	assert_null(ierr);
	/* account 0: 88 header bytes + 3 data + 10240 room + 5 padding + 8 rent epoch */
	size_t a0 = 8, a1 = a0 + 88 + 3 + 10240 + 5 + 8, d = a1 + 88 + 0 + 10240 + 8,
	       ixd = d + 8;
	assert_int_equal(a1, 10352);
	assert_int_equal(in.len, ixd + 8 + 2 + 32);
	assert_int_equal(get64(in.buf), 3);
	assert_int_equal(in.buf[a0], 0xff);
	assert_int_equal(in.buf[a0 + 1], 1);
	assert_int_equal(in.buf[a0 + 2], 1);
	assert_int_equal(in.buf[a0 + 3], 0);
	assert_int_equal(in.buf[a0 + 8], 1);
	assert_int_equal(in.buf[a0 + 40], 0xaa);
	assert_int_equal(get64(in.buf + a0 + 72), 1000);
	assert_int_equal(get64(in.buf + a0 + 80), 3);
	assert_memory_equal(in.buf + a0 + 88, "\x01\x02\x03", 3);
	assert_int_equal(get64(in.buf + a1 - 8), 7);
	assert_int_equal(in.buf[a1], 0xff);
	assert_int_equal(in.buf[a1 + 1], 0);
	assert_int_equal(in.buf[a1 + 8], 2);
	assert_int_equal(in.buf[a1 + 40], 0xbb);
	assert_int_equal(get64(in.buf + d - 8), 7);
	assert_int_equal(in.buf[d], 0); /* duplicate of position 0 */
	assert_int_equal(get64(in.buf + ixd), 2);
	assert_memory_equal(in.buf + ixd + 8, "hi", 2);
	assert_memory_equal(in.buf + ixd + 10, w.program, 32);
	sol_input_free(&in);
	world_free(&w);
}

/* Serializes, lets edit() play the program, deserializes: the runtime's verdict. */
static const char *roundtrip(struct world *w, void (*edit)(uint8_t *buf, size_t a1))
{
	struct sol_input in;
	const char *ierr;
	assert_int_equal(sol_serialize(w->acc, ix3, 3, NULL, 0, w->program, true, &in, &ierr), 0);
	edit(in.buf, 10352);
	assert_int_equal(sol_deserialize(&in, w->acc, ix3, w->program, &ierr), 0);
	sol_input_free(&in);
	return ierr;
}

static void grow(uint8_t *buf, size_t a1)
{
	(void)a1;
	uint64_t len = 3 + 5, lamports = 900;
	memcpy(buf + 8 + 80, &len, 8);
	memcpy(buf + 8 + 88 + 3, "\x04\x05\x06\x07\x08", 5);
	memcpy(buf + 8 + 72, &lamports, 8);
}

static void grow_too_far(uint8_t *buf, size_t a1)
{
	(void)a1;
	uint64_t len;
	memcpy(&len, buf + 8 + 80, 8);
	len += 10240 + 1;
	memcpy(buf + 8 + 80, &len, 8);
}

static void spend_foreign(uint8_t *buf, size_t a1)
{
	uint64_t lamports = 1;
	memcpy(buf + a1 + 72, &lamports, 8);
}

static void credit_foreign(uint8_t *buf, size_t a1)
{
	uint64_t lamports = 5000;
	memcpy(buf + a1 + 72, &lamports, 8);
}

static void give_away_nonzero(uint8_t *buf, size_t a1)
{
	(void)a1;
	buf[8 + 40] = 0xcc;
}

static void give_away_zeroed(uint8_t *buf, size_t a1)
{
	(void)a1;
	uint64_t len;
	memcpy(&len, buf + 8 + 80, 8);
	memset(buf + 8 + 88, 0, len);
	buf[8 + 40] = 0xcc;
}

static void test_changes(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	assert_null(roundtrip(&w, grow));
	assert_int_equal(w.acc[0].len, 8);
	assert_memory_equal(w.acc[0].data, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	assert_int_equal(w.acc[0].lamports, 900);
	assert_string_equal(roundtrip(&w, grow_too_far), "InvalidRealloc");
	assert_string_equal(roundtrip(&w, spend_foreign), "ExternalAccountLamportSpend");
	assert_null(roundtrip(&w, credit_foreign));
	assert_int_equal(w.acc[1].lamports, 5000);
	assert_string_equal(roundtrip(&w, give_away_nonzero), "ModifiedProgramId");
	assert_null(roundtrip(&w, give_away_zeroed));
	assert_int_equal(w.acc[0].owner[0], 0xcc);
	world_free(&w);
}

static void test_unaligned_layout(void **state)
{
	(void)state;
	struct world w;
	world_init(&w);
	struct sol_input in;
	const char *ierr;
	assert_int_equal(sol_serialize(w.acc, ix3, 3, (const uint8_t *)"hi", 2, w.program, false,
					&in, &ierr), 0);
	/* account 0: marker, signer, writable, key, lamports, length, 3 data bytes, owner,
	 * executable, rent epoch = 95 bytes; account 1 without data: 92; the duplicate: 1 */
	size_t a0 = 8, a1 = a0 + 95, d = a1 + 92, ixd = d + 1;
	assert_int_equal(in.len, ixd + 8 + 2 + 32);
	assert_int_equal(in.buf[a0], 0xff);
	assert_int_equal(in.buf[a0 + 3], 1);
	assert_int_equal(get64(in.buf + a0 + 35), 1000);
	assert_int_equal(get64(in.buf + a0 + 43), 3);
	assert_memory_equal(in.buf + a0 + 51, "\x01\x02\x03", 3);
	assert_int_equal(in.buf[a0 + 54], 0xaa);
	assert_int_equal(get64(in.buf + a0 + 87), 7);
	assert_int_equal(in.buf[a1 + 3], 2);
	assert_int_equal(in.buf[a1 + 51], 0xbb);
	assert_int_equal(in.buf[d], 0);
	assert_int_equal(get64(in.buf + ixd), 2);
	assert_memory_equal(in.buf + ixd + 10, w.program, 32);
	/* lamports and data come back; the owner and the length do not */
	in.buf[a0 + 51] = 9;
	in.buf[a0 + 54] = 0xcc;
	assert_int_equal(sol_deserialize(&in, w.acc, ix3, w.program, &ierr), 0);
	assert_null(ierr);
	assert_int_equal(w.acc[0].data[0], 9);
	assert_int_equal(w.acc[0].owner[0], 0xaa);
	sol_input_free(&in);
	world_free(&w);
}

static void test_checks(void **state)
{
	(void)state;
	uint8_t prog[32] = { 9 }, other[32] = { 8 }, data[2] = { 1, 2 };
	struct sol_account a = { .lamports = 10 };
	memcpy(a.owner, prog, 32);
	struct sol_borrow ro = { &a, false, prog }, rw = { &a, true, prog };
	bool oom;
	assert_string_equal(sol_account_set_lamports(&ro, 11), "ReadonlyLamportChange");
	assert_string_equal(sol_account_set_data(&ro, data, 2, &oom), "ReadonlyDataModified");
	assert_null(sol_account_set_data(&rw, data, 2, &oom));
	struct sol_borrow foreign = { &a, true, other };
	assert_string_equal(sol_account_set_data(&foreign, data, 1, &oom),
			    "AccountDataSizeChanged");
	assert_string_equal(sol_account_set_data(&foreign, (const uint8_t *)"xy", 2, &oom),
			    "ExternalAccountDataModified");
	assert_null(sol_account_set_data(&foreign, data, 2, &oom)); /* unchanged */
	assert_string_equal(sol_account_set_owner(&foreign, other), "ModifiedProgramId");
	a.executable = true;
	assert_string_equal(sol_account_set_lamports(&rw, 11), "ExecutableLamportChange");
	free(a.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_unaligned_layout),
		cmocka_unit_test(test_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
