# envctl - one GNU Makefile (git's style).  Quiet unless V=1.
#
#   make                 build envctl and envctl-agent
#   make check           lints, unit tests, the inventory corpus against
#                        Ansible, the fuzz corpus, e2e against real sshd
#                        hosts, the Slurm array job on a real one-node
#                        cluster, the bench's proxy test, then the unit
#                        tests and the fuzz corpus under ASan+UBSan
#   make bench           speed against OpenSSH, parallel-ssh, Ansible (root)
#   make bench-scale     envctl plan on 1000 inventory hosts (root)
#   make bench-inventory envctl check on a 10000-host INI inventory
#   make demo            a 3-host demo fleet and its plan (root)
#   make install         PREFIX=/usr/local DESTDIR= BINDIR= MANDIR=
#   make lint-layers     include rules between common/, agent/, controller/
#   make lint-sh         shellcheck on the shell scripts
#   make lint-headers    every header compiles on its own
#   make fuzz FUZZ=NAME  fuzz one target of tests/fuzz/ with libFuzzer (clang)

VERSION = 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/envctl
LIBEXECDIR ?= $(PREFIX)/libexec/envctl
DESTDIR ?=

CC ?= cc
PKG_CONFIG ?= pkg-config
SANITIZE ?=

ifeq ($(SANITIZE),)
B ?= build
SAN_FLAGS =
else
B ?= build/san
SAN_FLAGS = -fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
endif

WARN = -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	$(WARN) $(CFLAGS) $(SAN_FLAGS) -I. -MMD -MP \
	-DENVCTL_VERSION='"$(VERSION)"' -DENVCTL_DATADIR='"$(DATADIR)"' \
	-DENVCTL_LIBEXECDIR='"$(LIBEXECDIR)"'
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)

CTL_PKGS = libssh yaml-0.1 jansson libcrypto
CTL_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(CTL_PKGS) 2>/dev/null)
CTL_LIBS := $(shell $(PKG_CONFIG) --libs $(CTL_PKGS) 2>/dev/null) -lpthread -lm
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

ifeq ($(V),1)
Q =
QUIET_CC =
QUIET_AR =
QUIET_LINK =
QUIET_GEN =
else
Q = @
QUIET_CC = @echo '   CC     ' $@;
QUIET_AR = @echo '   AR     ' $@;
QUIET_LINK = @echo '   LINK   ' $@;
QUIET_GEN = @echo '   GEN    ' $@;
endif

COMMON_SRC = $(wildcard common/*.c)
CTL_SRC = $(filter-out controller/main.c,$(wildcard controller/*.c)) \
	$(wildcard controller/ssh/*.c)
TEST_SRC = $(wildcard tests/unit/check_*.c)
AGENT_SRC = $(wildcard agent/*.c)

COMMON_OBJ = $(COMMON_SRC:%.c=$(B)/%.o)
CTL_OBJ = $(CTL_SRC:%.c=$(B)/%.o)
TEST_BIN = $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
TEST_HELPERS = $(B)/tests/testutil.o $(B)/tests/agenttest.o
FUZZ_SRC = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN = $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
# The corpus runner's main(); `make fuzz` links libFuzzer's instead.
FUZZ_MAIN = $(B)/tests/fuzz/driver.o
FUZZ_LDFLAGS =

# The agent and common/ compiled again with the agent's compiler.
AGENT_OBJ = $(AGENT_SRC:%.c=$(B)/ag/%.o) $(COMMON_SRC:%.c=$(B)/ag/%.o) \
	$(AGENT_COMPAT)
FAULTS_OBJ = $(AGENT_SRC:%.c=$(B)/ag-faults/%.o) \
	$(COMMON_SRC:%.c=$(B)/ag-faults/%.o) $(AGENT_COMPAT)

ENVCTL = $(B)/envctl
AGENT = $(B)/envctl-agent
# The same agent with the test-only fault points (kill at each apply step)
# compiled in; never installed, never shipped to real hosts.
AGENT_FAULTS = $(B)/envctl-agent-faults

# The agent is shipped to every host, so it is static, stripped and small:
# built with musl (musl-gcc, Debian's musl-tools) it is 0.2 MB to upload
# where static glibc made it 1 MB.  It links Debian's libjansson.a, which
# was compiled for glibc with _FORTIFY_SOURCE: agent/musl/fortify.c gives
# musl the three checked functions it calls (a link error names any other).
# agent/musl/memcpy.c does jansson's byte-sized copies, which musl's
# memcpy makes slow.  Sanitizer runtimes need glibc and cannot be static,
# so that build is dynamic.  Build with AGENT_STRIP= to debug the agent.
AGENT_STRIP = -s
ifeq ($(SANITIZE),)
AGENT_CC = musl-gcc
AGENT_INC = $(B)/ag-include
AGENT_CFLAGS = -I$(AGENT_INC) -I$(B)/gen
AGENT_COMPAT = $(B)/ag/agent/musl/fortify.o $(B)/ag/agent/musl/memcpy.o
AGENT_LDFLAGS = -static -Wl,--wrap=memcpy $(AGENT_STRIP)
AGENT_LIBS = $(shell $(CC) -print-file-name=libjansson.a)
else
AGENT_CC = $(CC)
AGENT_INC =
AGENT_CFLAGS = $(CTL_CFLAGS) -I$(B)/gen
AGENT_COMPAT =
AGENT_LDFLAGS =
AGENT_LIBS = $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)
endif
JANSSON_INC := $(shell $(PKG_CONFIG) --variable=includedir jansson 2>/dev/null)

all: $(ENVCTL) $(if $(AGENT_SRC),$(AGENT))

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(CTL_CFLAGS) -c -o $@ $<

# The agent's Python programs are real files, embedded as C arrays.
PY_SRC = $(wildcard agent/py/*.py)
$(B)/gen/agent/py/%.py.h: agent/py/%.py scripts/embed
	@mkdir -p $(dir $@)
	$(QUIET_GEN)sh scripts/embed $(subst -,_,$*)_py $< >$@.tmp && mv $@.tmp $@
$(foreach v,ag ag-faults,$(B)/$(v)/agent/probe.o): \
    $(B)/gen/agent/py/probe.py.h
$(foreach v,ag ag-faults,$(B)/$(v)/agent/forkserver.o): \
    $(B)/gen/agent/py/forkserver.py.h
$(foreach v,ag ag-faults,$(B)/$(v)/agent/op_gpufacts.o): \
    $(B)/gen/agent/py/gpufacts.py.h

$(B)/ag/%.o: %.c | $(AGENT_INC)
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(AGENT_CC) $(ALL_CFLAGS) $(AGENT_CFLAGS) -c -o $@ $<

$(B)/ag-faults/%.o: %.c | $(AGENT_INC)
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(AGENT_CC) $(ALL_CFLAGS) -DENVCTL_FAULTS $(AGENT_CFLAGS) \
	    -c -o $@ $<

# Its copy loop must not be turned into a call to memcpy.
$(B)/ag/agent/musl/memcpy.o: ALL_CFLAGS += -fno-tree-loop-distribute-patterns

# musl's compiler sees musl's headers only: jansson's are copied beside.
$(B)/ag-include:
	@command -v $(AGENT_CC) >/dev/null || { echo "envctl-agent is built" \
	    "with $(AGENT_CC): install musl-tools (scripts/install-deps)" >&2; \
	    exit 1; }
	@mkdir -p $@.tmp
	cp $(JANSSON_INC)/jansson.h $(JANSSON_INC)/jansson_config.h $@.tmp/
	@mv $@.tmp $@

$(B)/tests/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(CTL_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(B)/libcommon.a: $(COMMON_OBJ)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

$(B)/libcontroller.a: $(CTL_OBJ)
	$(QUIET_AR)rm -f $@ && ar rcs $@ $^

$(ENVCTL): $(B)/controller/main.o $(B)/libcontroller.a $(B)/libcommon.a
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CTL_LIBS)

$(AGENT): $(AGENT_OBJ)
	$(QUIET_LINK)$(AGENT_CC) $(ALL_LDFLAGS) $(AGENT_LDFLAGS) -o $@ $^ \
	    $(AGENT_LIBS)

$(AGENT_FAULTS): $(FAULTS_OBJ)
	$(QUIET_LINK)$(AGENT_CC) $(ALL_LDFLAGS) $(AGENT_LDFLAGS) -o $@ $^ \
	    $(AGENT_LIBS)

$(B)/tests/check_%: $(B)/tests/check_%.o $(TEST_HELPERS) \
    $(B)/libcontroller.a $(B)/libcommon.a
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CTL_LIBS) $(CHECK_LIBS)

$(B)/fuzz/fuzz_%: $(B)/tests/fuzz/fuzz_%.o $(FUZZ_MAIN) \
    $(B)/libcontroller.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_LDFLAGS) $(FUZZ_LDFLAGS) -o $@ $^ $(CTL_LIBS)

# Unit tests find fixtures and the built program through these.
TEST_ENV = ENVCTL_SRCDIR=$(CURDIR) ENVCTL_BIN=$(CURDIR)/$(ENVCTL) \
	ENVCTL_AGENT=$(CURDIR)/$(AGENT) \
	ENVCTL_AGENT_FAULTS=$(CURDIR)/$(AGENT_FAULTS) \
	ENVCTL_PLAYBOOK_PATH=$(CURDIR)/playbooks \
	ENVCTL_FIXTURES=$(CURDIR)/tests/fixtures \
	CK_DEFAULT_TIMEOUT=60

check-unit: all $(AGENT_FAULTS) $(TEST_BIN)
	$(Q)$(TEST_ENV) sh tests/run-unit $(TEST_BIN)

# Every fuzz target over its corpus in tests/fuzz/corpus/ (no clang needed).
check-fuzz: $(FUZZ_BIN)
	$(Q)$(TEST_ENV) sh tests/fuzz/run $(FUZZ_BIN)

# libFuzzer on one target (clang; scripts/install-deps --fuzz), for
# FUZZTIME seconds, from the corpus; new inputs go to build/fuzz-corpus/NAME
# and a crash to build/fuzz-crash-*; copy the ones worth keeping into
# tests/fuzz/corpus/NAME.  make fuzz FUZZ=diff FUZZTIME=600
FUZZ_B = build/libfuzzer
fuzz:
	$(Q)test -n "$(FUZZ)" || { echo "make fuzz FUZZ=NAME: one of" \
	    $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%) >&2; exit 64; }
	$(Q)$(MAKE) --no-print-directory CC=clang B=$(FUZZ_B) \
	    SANITIZE=address,undefined,fuzzer-no-link FUZZ_MAIN= \
	    FUZZ_LDFLAGS=-fsanitize=fuzzer $(FUZZ_B)/fuzz/fuzz_$(FUZZ)
	$(Q)mkdir -p build/fuzz-corpus/$(FUZZ)
	$(Q)$(TEST_ENV) $(FUZZ_B)/fuzz/fuzz_$(FUZZ) \
	    -max_total_time=$(or $(FUZZTIME),60) \
	    -artifact_prefix=build/fuzz-crash- \
	    build/fuzz-corpus/$(FUZZ) tests/fuzz/corpus/$(FUZZ)

# Every inventory of tests/inventory/cases/ read by envctl and by the real
# ansible-inventory and ansible-playbook (ansible-core), compared.
check-inventory: all
	$(Q)tests/inventory/run $(ENVCTL)

# End-to-end scenarios against real sshd test hosts (needs root).
check-e2e: all $(AGENT_FAULTS)
	$(Q)$(TEST_ENV) tests/e2e/run

# contrib/slurm/envctl-drift.sbatch on a real single-node Slurm cluster
# (slurm-wlm and munge; root), against tests/e2e sshd hosts.
check-slurm: all
	$(Q)$(TEST_ENV) tests/slurm/run
# The shipped Slurm script and Kubernetes manifests parse (no cluster).
lint-contrib:
	$(Q)python3 tests/lint-contrib.py
# The benchmark's own tools (the latency proxy), tested for real.
check-bench-tools: $(B)/delayproxy
	$(Q)tests/bench/delayproxy-test $(B)/delayproxy

# Runs the suites without linking envctl, e.g. one module on its own:
#   make B=build/x CTL_SRC=controller/diff.c TEST_SRC=tests/unit/check_diff.c check-only
check-only: $(TEST_BIN) $(if $(AGENT_SRC),$(AGENT_FAULTS))
	$(Q)$(TEST_ENV) sh tests/run-unit $(TEST_BIN)

# Everything is compiled first, one job per CPU (JOBS), then the suites
# run one after another: their timings must not compete with a compiler.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
CHECK_BUILD = all $(AGENT_FAULTS) $(TEST_BIN) $(FUZZ_BIN)

check-build: $(CHECK_BUILD)

# Each step says how long it took (CI's budget is 15 minutes).
STEP = sh tests/timed-step
check: lint-layers lint-man lint-py lint-sh lint-headers lint-contrib
	$(Q)$(STEP) build $(MAKE) --no-print-directory -j$(JOBS) check-build \
	    $(B)/delayproxy
	$(Q)$(STEP) unit $(MAKE) --no-print-directory check-unit
	$(Q)$(STEP) inventory $(MAKE) --no-print-directory check-inventory
	$(Q)$(STEP) fuzz $(MAKE) --no-print-directory check-fuzz
	$(Q)$(STEP) e2e $(MAKE) --no-print-directory check-e2e
	$(Q)$(STEP) slurm $(MAKE) --no-print-directory check-slurm
	$(Q)$(STEP) bench-tools $(MAKE) --no-print-directory check-bench-tools
	$(Q)echo '== again under SANITIZE=address,undefined'
	$(Q)$(STEP) "build (sanitizers)" $(MAKE) --no-print-directory \
	    SANITIZE=address,undefined -j$(JOBS) check-build
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(STEP) "unit and fuzz (sanitizers)" $(MAKE) --no-print-directory \
	    SANITIZE=address,undefined check-unit check-fuzz

# Includes go one way: controller -> common, agent -> common; common stands
# alone and never sees libssh; only the transport module may include libssh.
lint-layers:
	$(Q)sh tests/lint-layers

# Every header compiles on its own: a .c that includes only it, built with
# the flags of each program that includes it (common/ with both).
HDR_CHECK = $(patsubst %,$(B)/hdr/%.o,$(wildcard common/*.h controller/*.h)) \
	$(patsubst %,$(B)/hdr-ag/%.o,$(wildcard common/*.h agent/*.h))
lint-headers: $(HDR_CHECK)
	$(Q)echo "lint-headers: ok"

$(B)/hdr/%.o: %
	@mkdir -p $(dir $@)
	$(Q)printf '#include "%s"\n' $< >$(@:.o=.c)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(CTL_CFLAGS) -c -o $@ $(@:.o=.c)

$(B)/hdr-ag/%.o: % | $(AGENT_INC)
	@mkdir -p $(dir $@)
	$(Q)printf '#include "%s"\n' $< >$(@:.o=.c)
	$(QUIET_CC)$(AGENT_CC) $(ALL_CFLAGS) $(AGENT_CFLAGS) -c -o $@ $(@:.o=.c)

# shellcheck on every shell script of the tree (scripts/install-deps
# installs it), found by its #! line (lib.sh, which is sourced, by its
# shellcheck directive): tests/inventory/run and tests/bench/ are Python.
SH_SCRIPTS = $(shell grep -l -e '^\#! */bin/\(ba\)\?sh' \
	-e '^\#! */usr/bin/env \(ba\)\?sh' -e '^\# shellcheck shell=' \
	scripts/* .ci/run tests/e2e/* tests/bench/* tests/inventory/run \
	tests/fuzz/run tests/run-unit tests/timed-step tests/lint-layers \
	tests/slurm/* \
	contrib/slurm/* 2>/dev/null)
lint-sh:
	$(Q)command -v shellcheck >/dev/null || { echo "lint-sh: install" \
	    "shellcheck (scripts/install-deps)" >&2; exit 1; }
	$(Q)shellcheck -x $(SH_SCRIPTS) && echo "lint-sh: ok"

# The main job on a built-in demo fleet of real local sshd hosts (root).
demo: all
	$(Q)B=$(B) scripts/demo start

demo-stop:
	$(Q)scripts/demo stop

# The benchmark's latency mode puts this TCP delay proxy before the hosts.
$(B)/delayproxy: tests/bench/delayproxy.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<

# envctl against an OpenSSH fan-out, parallel-ssh and Ansible on local sshd
# hosts (root; docs/bench.md):
#   make bench [HOSTS=100] [ROUNDS=3] [RTT=ms]   side by side; RTT: latency,
#                                                then the round trips
#   make bench-latency [LAT_RTT=200] [LAT_HOSTS=4]  round trips per command
#   make bench-scale [SCALE=1000] [HOSTS=100]    SCALE names over HOSTS sshds
bench: all $(B)/delayproxy
	$(Q)B=$(B) tests/bench/run --hosts $(or $(HOSTS),100) \
	    $(if $(ROUNDS),--rounds $(ROUNDS)) $(if $(RTT),--rtt-ms $(RTT))
	$(Q)$(MAKE) --no-print-directory bench-latency

bench-latency: all $(B)/delayproxy
	$(Q)B=$(B) tests/bench/run --latency --hosts $(or $(LAT_HOSTS),4) \
	    --rtt-ms $(or $(LAT_RTT),200) --rounds $(or $(ROUNDS),3)

bench-scale: all $(B)/delayproxy
	$(Q)B=$(B) tests/bench/run --scale $(or $(SCALE),1000) \
	    --hosts $(or $(HOSTS),100) --rounds $(or $(ROUNDS),2) \
	    $(if $(RTT),--rtt-ms $(RTT))

# envctl check on a generated 10000-host INI inventory with group_vars/
# (time and peak RSS against 1 s and 64 MB), and a 150000-deep YAML value
# it must refuse quickly.
bench-inventory: all
	$(Q)tests/bench/inventory-scale $(ENVCTL)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) \
	    $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(DATADIR)/playbooks
	install -m 0755 $(ENVCTL) $(DESTDIR)$(BINDIR)/envctl
	install -m 0755 $(AGENT) $(DESTDIR)$(LIBEXECDIR)/envctl-agent
	install -m 0644 docs/envctl.1 $(DESTDIR)$(MANDIR)/man1/envctl.1
	install -m 0644 docs/envctl-inventory.5 docs/envctl-playbook.5 \
	    $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 playbooks/*.yaml playbooks/*.tmpl \
	    $(DESTDIR)$(DATADIR)/playbooks/
	install -d $(DESTDIR)$(PREFIX)/share/doc/envctl
	install -m 0644 docs/cron.md docs/sharding.md \
	    contrib/systemd/envctl-drift.service \
	    contrib/systemd/envctl-drift.timer contrib/slurm/envctl-drift.sbatch \
	    contrib/kubernetes/envctl-drift-job.yaml \
	    contrib/kubernetes/envctl-drift-merge-job.yaml \
	    $(DESTDIR)$(PREFIX)/share/doc/envctl/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/envctl $(DESTDIR)$(MANDIR)/man1/envctl.1 \
	    $(DESTDIR)$(LIBEXECDIR)/envctl-agent \
	    $(DESTDIR)$(MANDIR)/man5/envctl-inventory.5 \
	    $(DESTDIR)$(MANDIR)/man5/envctl-playbook.5
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(PREFIX)/share/doc/envctl

MAN = docs/envctl.1 docs/envctl-inventory.5 docs/envctl-playbook.5

# The agent's Python programs compile (bytecode kept under build/).
lint-py:
	$(Q)PYTHONPYCACHEPREFIX=$(CURDIR)/$(B)/pycache python3 -m py_compile \
	    $(PY_SRC) && echo "lint-py: ok"

lint-man:
	$(Q)mandoc -Tlint -Wwarning $(MAN) && echo "lint-man: ok"

clean:
	rm -rf build

.PHONY: check-slurm lint-contrib
.PHONY: all bench bench-latency bench-inventory bench-scale check-inventory demo demo-stop check check-build check-unit check-e2e check-bench-tools check-fuzz check-only fuzz lint-layers lint-man lint-py lint-sh lint-headers install uninstall clean
.SECONDARY:

-include $(shell find build -name '*.d' 2>/dev/null)
