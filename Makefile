# tally: plain GNU Make. Modules are found by wildcard: a new src/MODULE/*.c joins the tally
# binary (through build/modules.a), a new tests/MODULE/test_*.c becomes a unit test, a new
# tests/MODULE/*.test.sh a CLI test. libtally is the modules LIBTALLY_MODULES names. A
# module's subfolder (src/solana/crypto/, tests/solana/crypto/) is part of the module.
#
#   make            build build/tally, build/libtally.a and build/libtally.so (no cmocka needed)
#   make unit       also the cmocka unit-test binaries, build/tests/MODULE/test_*
#   make test       install missing packages, build, run the suite plain and under ASan+UBSan,
#                   tests side by side (JOBS at a time: tests/run.sh), fuzz-check beside them
#   make demo       install missing packages, build, and run the bundled example
#   make fuzz       build the libFuzzer targets (clang) into build-fuzz/
#   make fuzz-check run each of them on its corpus and regressions, then FUZZ_SECONDS
#                   (20) of fuzzing each, FUZZ_JOBS targets at a time; make test does it
#                   when clang has libFuzzer
#   make SAN=1      the sanitizer build, in build-asan/
#   make install    into PREFIX (/usr/local), under DESTDIR if set: bin/tally,
#                   include/tally/*.h, lib/libtally.a, lib/libtally.so.VERSION with its
#                   SONAME link libtally.so.MAJOR and libtally.so, lib/pkgconfig/tally.pc
#                   (BINDIR, INCLUDEDIR and LIBDIR may be set apart), and the Lua module
#                   tally.so into LUA_CMODDIR (lib/lua/5.4, where Debian's lua5.4 looks
#                   under /usr/local); make uninstall
#
# The Lua 5.4 module build/lua/tally.so (lua/*.c) is part of `make` when pkg-config
# finds lua5.4 (liblua5.4-dev); LUA=0 leaves it out.
#
# CFLAGS, CPPFLAGS and LDFLAGS (command line or environment) come after the project's own
# flags, so they can override them. -Werror is on for the project's builds and CI; a
# distribution build, whose compiler may warn about things ours does not, turns it off
# with WERROR=0.

CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif

ifeq ($(SAN),1)
BUILD ?= build-asan
OPT := -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
else
BUILD ?= build
OPT := -O2
endif

WERROR ?= 1
WARN := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Wshadow -Wstrict-prototypes -Wvla \
	-Wformat=2 -Wno-unused-parameter
TALLY_CPPFLAGS := -Iinclude -Isrc -D_GNU_SOURCE
# Everything is compiled hidden: libtally.so exports what include/tally/ marks TALLY_API.
ALL_CFLAGS := -std=gnu11 -g -fPIC -fvisibility=hidden $(OPT) $(WARN) $(TALLY_CPPFLAGS) \
	$(CPPFLAGS) $(CFLAGS)
# Each on one line: tests that link test programs read them from here. LIBTALLY_LIBS is what
# libtally links against; LIBS what every module (build/modules.a) does.
LIBTALLY_LIBS := -lz -ldeflate -lisal -lzstd -llzma -liberty
LIBS := -lbpf -lelf -lz -ldeflate -lisal -lzstd -llzma -liberty -ljansson -lsodium -lnettle -lsecp256k1 -lgmp -lpthread -lm
LDFLAGS_ALL := $(filter -fsanitize=%,$(OPT)) $(LDFLAGS)
# The tally binary links the static archives Debian ships for these (built position-
# independent, so tally stays a PIE), so that its start-up loads next to nothing:
# `tally --version` takes about 0.75 ms of CPU instead of 1.1 (a report of 600 samples is
# a few ms). libtally.so, the tests and the sanitizer build link as before.
STATIC_OK := bpf elf z deflate isal zstd lzma iberty jansson sodium nettle secp256k1 gmp
static_a = $(if $(findstring /,$(shell $(CC) -print-file-name=lib$(1).a)),-l:lib$(1).a,-l$(1))
# Nothing in the library needs libm (tests do): loading it took 0.4 ms of every start.
ifeq ($(SAN),1)
TALLY_LIBS := $(LIBS)
else
TALLY_LIBS := $(foreach l,$(filter-out -lm,$(LIBS)),$(if $(filter $(l:-l%=%),$(STATIC_OK)),$(call static_a,$(l:-l%=%)),$(l)))
endif

# The version is the header's; the SONAME changes with its first number only.
VERSION := $(shell sed -n 's/^\#define TALLY_VERSION "\(.*\)"$$/\1/p' include/tally/tally.h)
SONAME := libtally.so.$(firstword $(subst ., ,$(VERSION)))

# libtally is what include/tally/ offers, the symbolizer and the agent, and what they need:
# the profile model and report's pprof writer, with which the agent writes its profiles
# (and threads.c, whose rep_no_threads the pprof writer calls).
# The recorder, the Solana runtime and the rest are the tally binary's (docs/library.md).
LIBTALLY_MODULES := base elf dwarf symbolize agent profile
LIBTALLY_SRCS := $(wildcard $(LIBTALLY_MODULES:%=src/%/*.c) $(LIBTALLY_MODULES:%=src/%/*/*.c)) \
	src/report/pprof.c src/report/pprof_segments.c src/report/threads.c
# src/record/bpf/*.bpf.c are BPF programs, built apart (bpf_embed below).
MODULE_SRCS := $(filter-out src/cli/% %.bpf.c,$(wildcard src/*/*.c src/*/*/*.c src/*/*/*/*.c))
CLI_SRCS := $(wildcard src/cli/*.c src/cli/*/*.c)
LIBTALLY_OBJS := $(LIBTALLY_SRCS:%.c=$(BUILD)/%.o)
MODULE_OBJS := $(MODULE_SRCS:%.c=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(wildcard tests/*/test_*.c tests/*/*/test_*.c)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)

# The Lua module links libtally.a in, its symbols kept inside: it exports luaopen_tally only.
LUA ?= $(if $(shell pkg-config --exists lua5.4 && echo y),1,0)
LUA_MODULE := $(if $(filter 1,$(LUA)),$(BUILD)/lua/tally.so)
LUA_SRCS := $(wildcard lua/*.c)

.PHONY: all test check demo deps fuzz fuzz-check clean unit install uninstall
all: $(BUILD)/tally $(BUILD)/libtally.a $(BUILD)/libtally.so $(BUILD)/$(SONAME) $(LUA_MODULE)
unit: $(UNIT_BINS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The BPF program of Python frames (src/record/bpf/), built for the kernel's BPF machine
# and embedded into record/python_bpf.o with .incbin (the path given by PY_BPF_OBJECT). The
# records it writes are declared in src/perf/interp_records.h, which replay reads them by.
BPF_CFLAGS := -target bpf -O2 -g -Wall -Werror -Isrc -Isrc/record/bpf \
	-idirafter /usr/include/$(shell $(CC) -print-multiarch 2>/dev/null || gcc -print-multiarch)
define bpf_embed
$(1)/bpf/%.bpf.o: src/record/bpf/%.bpf.c src/record/bpf/python_abi.h src/perf/interp_records.h
	@mkdir -p $$(dir $$@)
	@echo "  BPF     $$<"
	@clang $$(BPF_CFLAGS) -c $$< -o $$@
$(1)/src/record/python_bpf.o: $(1)/bpf/python_stack.bpf.o
$(1)/src/record/python_bpf.o: $(2) += -DPY_BPF_OBJECT='"$(1)/bpf/python_stack.bpf.o"'
endef
$(eval $(call bpf_embed,$(BUILD),ALL_CFLAGS))
$(eval $(call bpf_embed,build-fuzz/obj,FUZZ_CFLAGS))

$(BUILD)/libtally.a: $(LIBTALLY_OBJS)
	@rm -f $@
	ar rcs $@ $^

# Every module's objects, for the tally binary, the unit tests and the test programs that
# reach into modules libtally leaves out. Never installed.
$(BUILD)/modules.a: $(MODULE_OBJS)
	@rm -f $@
	ar rcs $@ $^

# libtally.map names and versions what the library exports. --exclude-libs: the static
# archives linked in (libiberty) keep their names to themselves. -z defs: a name
# libtally's objects use and none of them defines fails the link here, not in a program
# that loads the library (unless sanitized: the sanitizer's runtime is the executable's).
LIBTALLY_DEFS := $(if $(filter 1,$(SAN)),,-Wl,-z,defs)
$(BUILD)/libtally.so.$(VERSION): $(LIBTALLY_OBJS) libtally.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=libtally.map \
		-Wl,--exclude-libs,ALL $(LIBTALLY_DEFS) $(LDFLAGS_ALL) -o $@ $(LIBTALLY_OBJS) \
		$(LIBTALLY_LIBS)

$(BUILD)/$(SONAME) $(BUILD)/libtally.so: $(BUILD)/libtally.so.$(VERSION)
	ln -sf $(notdir $<) $@

$(BUILD)/tally: $(CLI_OBJS) $(BUILD)/modules.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(CLI_OBJS) $(BUILD)/modules.a $(TALLY_LIBS)

$(BUILD)/lua/tally.so: $(LUA_SRCS) $(wildcard lua/*.h) $(BUILD)/libtally.a
	@mkdir -p $(dir $@)
	@echo "  LUA     $(LUA_SRCS)"
	@$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags lua5.4) -shared -Wl,--exclude-libs,ALL \
		$(LDFLAGS_ALL) -o $@ $(LUA_SRCS) $(BUILD)/libtally.a $(LIBTALLY_LIBS)

# A unit test links what it tests from every module's archive; the API's tests link
# libtally.a and its libraries alone, as a program built against the library does.
TEST_LINK = $(BUILD)/modules.a -lcmocka $(LIBS)
$(BUILD)/tests/api/%: TEST_LINK = $(BUILD)/libtally.a -lcmocka $(LIBTALLY_LIBS)
$(BUILD)/tests/%: tests/%.c $(BUILD)/modules.a $(BUILD)/libtally.a
	@mkdir -p $(dir $@)
	@echo "  TEST    $<"
	@$(CC) $(ALL_CFLAGS) -Wno-unused-function $(LDFLAGS_ALL) -o $@ $< $(TEST_LINK)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR ?= $(PREFIX)/lib
HEADERS := $(wildcard include/tally/*.h)
LUA_CMODDIR ?= $(LIBDIR)/lua/5.4

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR)/tally $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 755 $(BUILD)/tally $(DESTDIR)$(BINDIR)/tally
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/tally
	install -m 644 $(BUILD)/libtally.a $(DESTDIR)$(LIBDIR)/libtally.a
	install -m 755 $(BUILD)/libtally.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libtally.so.$(VERSION)
	ln -sf libtally.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtally.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' tally.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/tally.pc
ifneq ($(LUA_MODULE),)
	install -d $(DESTDIR)$(LUA_CMODDIR)
	install -m 755 $(LUA_MODULE) $(DESTDIR)$(LUA_CMODDIR)/tally.so
endif

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tally $(HEADERS:include/%=$(DESTDIR)$(INCLUDEDIR)/%) \
		$(addprefix $(DESTDIR)$(LIBDIR)/,libtally.a libtally.so.$(VERSION) $(SONAME) \
		libtally.so pkgconfig/tally.pc) $(DESTDIR)$(LUA_CMODDIR)/tally.so
	rmdir $(DESTDIR)$(INCLUDEDIR)/tally 2>/dev/null || true

deps:
	@scripts/install-deps.sh test

# The whole suite, plain and sanitized, its tests side by side (tests/run.sh, which also runs
# fuzz-check beside them and prints the closing "N passed, N failed").
NPROC := $(shell nproc 2>/dev/null || echo 2)
test: deps
	$(MAKE) -j$(NPROC) all unit
	$(MAKE) -j$(NPROC) SAN=1 all unit
	@tests/run.sh --fuzz build build-asan

check: test

demo:
	@scripts/install-deps.sh build
	$(MAKE) all
	@scripts/demo.sh $(BUILD)

FUZZ_SRCS := $(wildcard fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.c=build-fuzz/%)
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (libFuzzer's convention) lowers size thresholds
# that small inputs would never pass: see src/symbolize/front.c.
FUZZ_CFLAGS := -std=gnu11 -g -O1 $(WARN) -fsanitize=fuzzer-no-link,address,undefined \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
	-fno-sanitize-recover=undefined $(TALLY_CPPFLAGS) $(CPPFLAGS)
FUZZ_OBJS := $(MODULE_SRCS:%.c=build-fuzz/obj/%.o)
fuzz: $(FUZZ_BINS)
# Kept between builds (they would be intermediate files of the pattern rule below).
.SECONDARY: $(FUZZ_OBJS)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $<"
	@clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build-fuzz/%: fuzz/%.c $(FUZZ_OBJS)
	@echo "  FUZZ    $@"
	@clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LIBS)
FUZZ_SECONDS ?= 20
fuzz-check: fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz-check.sh

clean:
	rm -rf build build-asan build-fuzz build-clang

-include $(MODULE_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d)
