# efplan: one Makefile for the whole tree.
#
#   make          build build/efplan
#   make run      install missing Debian packages, build, plan the sample
#                 queue, apply it on this machine (stand-in jobs, ~30 s)
#   make test     install missing Debian packages, build, run every test
#   make asan     the whole test suite under AddressSanitizer + UBSan
#   make valgrind the unit tests and a validate run under valgrind
#   make fuzz     fuzz the CSV and JSON readers (FUZZ_SECONDS, default 60)
#   make fuzz-each  fuzz each of the seven readers in turn, then the HTTP
#                 request path (tests/fuzz/fuzz_http.c), FUZZ_SECONDS each
#   make test-torch  the real PyTorch tests: resized by apply, by serve (installs python3-torch)
#   make deps     install the Debian packages the project needs (as root),
#                 or print the command to do so
#   make install  copy efplan, its data, efplan(1) and the bash completion
#                 under PREFIX (default /usr/local; DESTDIR, BINDIR,
#                 DATADIR, MANDIR, BASHCOMPDIR); make uninstall removes them
#   make V=1 ...  show full compiler command lines

CC       ?= cc
OPT      ?= -O2
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wno-unused-parameter
STD      := -std=c11
# the bundled inputs' last resort, compiled in (common/path.h: efplan
# looks at $EFPLAN_DATA, then beside its own executable, then here)
BUILTIN_DATA ?= $(CURDIR)/inputs
DEFS     := -D_POSIX_C_SOURCE=200809L -DEFPLAN_DATADIR='"$(BUILTIN_DATA)"'
INCS     := -iquote $(CURDIR)
SAN      ?=
CFLAGS_ALL = $(STD) $(WARN) $(OPT) -g -fopenmp $(SAN) $(DEFS) $(INCS) -MMD -MP $(CFLAGS)
LDLIBS_ALL = -fopenmp $(SAN) -ljansson -lglpk -lm $(LDLIBS)
# the service (efplan serve, token, and the CLI as its client)
LDLIBS_SVC = -lmicrohttpd -lsqlite3 -lsodium -lcurl

BUILD    ?= build
OBJ      := $(BUILD)/obj

# Debian packages: build, and tools used by tests and the fuzz target.
DEB_BUILD := gcc make libc6-dev libglpk-dev libjansson-dev libcmocka-dev \
             libmicrohttpd-dev libsqlite3-dev libsodium-dev \
             libcurl4-openssl-dev curl openssl python3 jq
DEB_FUZZ  := clang libclang-rt-14-dev
DEB_CHECK := valgrind
# tests (make deps): tests/e2e/charts.sh renders every chart to PNG;
# tests/e2e/serve_metrics.sh checks /metrics with promtool (prometheus)
DEB_TEST  := librsvg2-bin fonts-dejavu-core prometheus
# make test-torch only: Debian's PyTorch (for /usr/bin/python3), heavy
DEB_TORCH := python3-torch

ifeq ($(V),1)
Q :=
else
Q := @
endif

COMMON_SRC  := $(wildcard common/*.c)
MODEL_SRC   := $(wildcard model/*.c)
PLANNER_SRC := $(wildcard planner/*.c)
SIM_SRC     := $(wildcard simulator/*.c)
SOLVER_SRC  := $(wildcard solver/*.c)
SERVICE_SRC := $(wildcard service/*.c)
CLI_SRC     := $(wildcard cli/*.c)
UNIT_SRC    := $(wildcard tests/unit/test_*.c)

EXEC_SRC    := $(wildcard executor/*.c)
COMMON_OBJ  := $(COMMON_SRC:%.c=$(OBJ)/%.o)
MODEL_OBJ   := $(MODEL_SRC:%.c=$(OBJ)/%.o)
PLANNER_OBJ := $(PLANNER_SRC:%.c=$(OBJ)/%.o)
SIM_OBJ     := $(SIM_SRC:%.c=$(OBJ)/%.o)
EXEC_OBJ    := $(EXEC_SRC:%.c=$(OBJ)/%.o)
SOLVER_OBJ  := $(SOLVER_SRC:%.c=$(OBJ)/%.o)
SERVICE_OBJ := $(SERVICE_SRC:%.c=$(OBJ)/%.o)
CLI_OBJ     := $(CLI_SRC:%.c=$(OBJ)/%.o)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

LIBCOMMON   := $(BUILD)/libcommon.a
LIBMODEL    := $(BUILD)/libmodel.a
LIBPLANNER  := $(BUILD)/libplanner.a
# the bottom three layers, in link order
LIBBASE     := $(LIBPLANNER) $(LIBMODEL) $(LIBCOMMON)
LIBSIM      := $(BUILD)/libsim.a
LIBEXEC     := $(BUILD)/libexecutor.a
LIBSOLVER   := $(BUILD)/libsolver.a
LIBSERVICE  := $(BUILD)/libservice.a
EFPLAN      := $(BUILD)/efplan

# made by running the built efplan: the manual page and the bash
# completion, from its command table and help text (cli/manpage.c)
MANPAGE     := $(BUILD)/efplan.1
COMPLETION  := $(BUILD)/efplan.bash

.PHONY: all run test unit e2e test-torch asan valgrind fuzz fuzz-build \
        fuzz-each deps deps-fuzz deps-check deps-torch clean help \
        install uninstall
.DEFAULT_GOAL := all
.SECONDARY:

all: $(EFPLAN) $(UNIT_BIN) $(MANPAGE) $(COMPLETION)

$(MANPAGE): $(EFPLAN)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)$(EFPLAN) --man >$@.tmp && mv $@.tmp $@

$(COMPLETION): $(EFPLAN)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)$(EFPLAN) --bash-completion >$@.tmp && mv $@.tmp $@

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIBCOMMON): $(COMMON_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBMODEL): $(MODEL_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBPLANNER): $(PLANNER_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSIM): $(SIM_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBEXEC): $(EXEC_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSOLVER): $(SOLVER_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBSERVICE): $(SERVICE_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(EFPLAN): $(CLI_OBJ) $(LIBSERVICE) $(LIBSOLVER) $(LIBEXEC) $(LIBSIM) $(LIBBASE)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $(CLI_OBJ) $(PROF_LINK) $(LIBSERVICE) $(LIBSOLVER) $(LIBEXEC) \
	  $(LIBSIM) $(LIBBASE) $(LDLIBS_ALL) $(LDLIBS_SVC) $(CUDA_LIBS)

$(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(LIBSERVICE) $(LIBSOLVER) $(LIBEXEC) $(LIBSIM) $(LIBBASE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $< $(LIBSERVICE) $(LIBSOLVER) $(LIBEXEC) $(LIBSIM) $(LIBBASE) \
	  $(LDLIBS_ALL) $(LDLIBS_SVC) -lcmocka

# ---- profiler (efplan profile) ---------------------------------------------
#
# HAVE_CUDA=1 builds the GPU side of `efplan profile` (profiler/prof_gpu.cu)
# with nvcc against the CUDA runtime and NCCL; HAVE_CUDA=0 builds without
# it (`efplan profile` then says so). The default is detected: nvcc on PATH
# or /usr/local/cuda/bin/nvcc, plus nccl.h and libnccl beside it or in the
# system directories. CUDA is never installed by `make deps`.
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(firstword \
             $(shell command -v nvcc 2>/dev/null) \
             $(wildcard /usr/local/cuda/bin/nvcc)))
CUDA_HOME := $(CUDA_HOME)
NVCC      ?= $(CUDA_HOME)/bin/nvcc
NVCC_ARCH ?= -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_90,code=[sm_90,compute_90]
NCCL_H    := $(firstword $(wildcard $(CUDA_HOME)/include/nccl.h \
             /usr/include/nccl.h))
LIBNCCL   := $(firstword $(wildcard $(CUDA_HOME)/lib64/libnccl.so \
             $(CUDA_HOME)/lib/libnccl.so /usr/lib/*/libnccl.so))
HAVE_CUDA ?= $(if $(and $(CUDA_HOME),$(NCCL_H),$(LIBNCCL)),1,0)

PROF_SRC      := $(filter-out profiler/prof_gpu_none.c,$(wildcard profiler/*.c))
PROF_OBJ      := $(PROF_SRC:%.c=$(OBJ)/%.o)
LIBPROFILER   := $(BUILD)/libprofiler.a
PROF_GPU_NONE := $(OBJ)/profiler/prof_gpu_none.o
ifeq ($(HAVE_CUDA),1)
ifeq ($(and $(wildcard $(NVCC)),$(NCCL_H),$(LIBNCCL)),)
$(error HAVE_CUDA=1 but nvcc, nccl.h or libnccl.so not found \
        (CUDA_HOME=$(CUDA_HOME)))
endif
PROF_GPU_OBJ  := $(OBJ)/profiler/prof_gpu.o
CUDA_LIBDIRS  := $(sort $(CUDA_HOME)/lib64 $(patsubst %/,%,$(dir $(LIBNCCL))))
CUDA_LIBS     := $(CUDA_LIBDIRS:%=-L%) $(CUDA_LIBDIRS:%=-Wl,-rpath,%) \
                 -lcudart -lnccl -lstdc++
# the same efplan without the GPU side, for the test of that build
PROF_NOCUDA   := $(BUILD)/tests/efplan-nocuda
else
PROF_GPU_OBJ  := $(PROF_GPU_NONE)
CUDA_LIBS     :=
PROF_NOCUDA   :=
endif
PROF_LINK     := $(LIBPROFILER) $(PROF_GPU_OBJ)

all: $(PROF_NOCUDA)

$(LIBPROFILER): $(PROF_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(OBJ)/%.o: %.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) -O2 -std=c++17 $(INCS:-iquote=-I) $(NVCC_ARCH) -Xcompiler -Wall,-Wextra,-Werror \
	  -MMD -MP -c $< -o $@

$(EFPLAN): $(PROF_LINK)

$(PROF_NOCUDA): $(CLI_OBJ) $(LIBPROFILER) $(PROF_GPU_NONE) $(LIBSERVICE) \
                $(LIBSOLVER) $(LIBEXEC) $(LIBSIM) $(LIBBASE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $(CLI_OBJ) $(LIBPROFILER) $(PROF_GPU_NONE) $(LIBSERVICE) \
	  $(LIBSOLVER) $(LIBEXEC) $(LIBSIM) $(LIBBASE) $(LDLIBS_ALL) $(LDLIBS_SVC)

$(BUILD)/tests/test_prof: $(OBJ)/tests/unit/test_prof.o $(LIBPROFILER) \
                          $(PROF_GPU_NONE) $(LIBBASE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $< $(LIBPROFILER) $(PROF_GPU_NONE) $(LIBBASE) \
	  $(LDLIBS_ALL) -lcmocka

# ---- setup ------------------------------------------------------------------

# Install what is missing; as non-root print the exact command and fail.
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
	    grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "efplan: installing Debian packages:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq --no-install-recommends $$missing) \
	      >/dev/null || exit 1; \
	  else \
	    echo "efplan: missing Debian packages; run as root:"; \
	    echo "  apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
endef

deps:
	$(call install_missing,$(DEB_BUILD) $(DEB_TEST))

deps-fuzz:
	$(call install_missing,$(DEB_FUZZ))

deps-check:
	$(call install_missing,$(DEB_CHECK))

deps-torch:
	$(call install_missing,$(DEB_TORCH))

# ---- install ----------------------------------------------------------------
#
# make install PREFIX=/opt/efplan copies what `make` built (it builds
# first when needed): BINDIR/efplan, DATADIR/efplan/inputs (the bundled
# inputs), DATADIR/efplan/examples (jobs to apply), MANDIR/man1/efplan.1,
# BASHCOMPDIR/efplan. efplan finds its
# inputs beside its executable (../share/efplan/inputs), so keep BINDIR
# and DATADIR under one PREFIX, or set EFPLAN_DATA. DESTDIR is prefixed
# to every path (packaging); uninstall removes the same files.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
SYSTEMDDIR  ?= $(PREFIX)/lib/systemd/system
SYSTEMCTL   ?= $(shell command -v systemctl 2>/dev/null || echo /bin/systemctl)
EFDATA      := $(DATADIR)/efplan
# the systemd units (dist/systemd/, docs/nightly.md): efplan nightly's
# service, timer and the timer's kick, efplan serve's service; the .in
# files get the installed efplan's path
UNITS_IN    := efplan-nightly.service efplan-nightly-kick.service \
               efplan-serve.service
UNITS       := $(UNITS_IN) efplan-nightly.timer

install: $(EFPLAN) $(MANPAGE) $(COMPLETION)
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(EFDATA)" \
	  "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(BASHCOMPDIR)"
	install -m 755 $(EFPLAN) "$(DESTDIR)$(BINDIR)/efplan"
	rm -rf "$(DESTDIR)$(EFDATA)/inputs"
	cp -R inputs "$(DESTDIR)$(EFDATA)/inputs"
	rm -rf "$(DESTDIR)$(EFDATA)/examples"
	cp -R examples "$(DESTDIR)$(EFDATA)/examples"
	chmod -R u+rwX,go+rX,go-w "$(DESTDIR)$(EFDATA)/inputs" \
	  "$(DESTDIR)$(EFDATA)/examples"
	install -m 644 $(MANPAGE) "$(DESTDIR)$(MANDIR)/man1/efplan.1"
	install -m 644 $(COMPLETION) "$(DESTDIR)$(BASHCOMPDIR)/efplan"
	install -d "$(DESTDIR)$(SYSTEMDDIR)"
	for u in $(UNITS_IN); do \
	  sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSTEMCTL@|$(SYSTEMCTL)|g' \
	    dist/systemd/$$u.in > "$(DESTDIR)$(SYSTEMDDIR)/$$u.tmp" && \
	  chmod 644 "$(DESTDIR)$(SYSTEMDDIR)/$$u.tmp" && \
	  mv "$(DESTDIR)$(SYSTEMDDIR)/$$u.tmp" "$(DESTDIR)$(SYSTEMDDIR)/$$u" \
	  || exit 1; \
	done
	install -m 644 dist/systemd/efplan-nightly.timer \
	  "$(DESTDIR)$(SYSTEMDDIR)/efplan-nightly.timer"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/efplan" "$(DESTDIR)$(MANDIR)/man1/efplan.1" \
	  "$(DESTDIR)$(BASHCOMPDIR)/efplan"
	for u in $(UNITS); do rm -f "$(DESTDIR)$(SYSTEMDDIR)/$$u"; done
	rm -rf "$(DESTDIR)$(EFDATA)/inputs" "$(DESTDIR)$(EFDATA)/examples"
	-rmdir "$(DESTDIR)$(EFDATA)" 2>/dev/null

# ---- run and test -------------------------------------------------------------

SAMPLE_JOBS    := inputs/jobs/sample.json
SAMPLE_CLUSTER := n4g8
SAMPLE_CURVES  := A100

# the last step applies the sample on one node for real, on this machine:
# its jobs are stand-ins that do their iterations in a few hundredths of
# a second (inputs/README.md), the plan clock runs 700 times faster
run:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	$(EFPLAN) plan --jobs $(SAMPLE_JOBS) --cluster $(SAMPLE_CLUSTER) \
	  --curves $(SAMPLE_CURVES) --out $(BUILD)/sample-plan.json \
	  --svg $(BUILD)/sample-plan.svg
	$(EFPLAN) plan --jobs $(SAMPLE_JOBS) --cluster n1g8 \
	  --curves $(SAMPLE_CURVES) --out $(BUILD)/sample-local.json
	@rm -rf $(BUILD)/sample-local.state
	@echo "the plan's clock follows the jobs here (--follow-jobs): it runs 700 times" \
	  "faster but waits for a job behind its plan, so a slow machine stretches" \
	  "the clock instead of missing a deadline"
	$(EFPLAN) apply $(BUILD)/sample-local.json --time-scale 700 --follow-jobs

test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(BUILD)

unit: all
	@tests/run.sh $(BUILD) unit

e2e: all
	@tests/run.sh $(BUILD) e2e

# tests/e2e/torch_resize.sh with torch required: plain `make test` runs it
# too, and it skips there when /usr/bin/python3 has no torch
test-torch:
	@$(MAKE) --no-print-directory deps deps-torch
	@$(MAKE) --no-print-directory all
	@EFPLAN_TORCH_TEST=1 tests/run.sh $(BUILD) e2e 'torch_*'

asan:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" all
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  tests/run.sh build-asan

valgrind:
	@$(MAKE) --no-print-directory deps deps-check
	@$(MAKE) --no-print-directory all
	@VALGRIND="valgrind -q --error-exitcode=99 --leak-check=full \
	  --errors-for-leak-kinds=definite" tests/run.sh $(BUILD)

FUZZ_SECONDS ?= 60
FUZZ_SRC := tests/fuzz/fuzz_inputs.c
FUZZ_READERS := queue_csv queue_json curve_csv curve_json cluster_csv \
                cluster_json plan_json
# the HTTP request path (route, query, headers, body) through a running
# srv: tests/fuzz/fuzz_http.c
FUZZ_HTTP_SRC := tests/fuzz/fuzz_http.c
fuzz-build:
	@$(MAKE) --no-print-directory deps deps-fuzz
	@mkdir -p $(BUILD)/fuzz
	clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined $(DEFS) \
	  $(INCS) -o $(BUILD)/fuzz/fuzz_inputs $(FUZZ_SRC) $(COMMON_SRC) \
	  $(MODEL_SRC) $(PLANNER_SRC) -fopenmp -ljansson -lglpk -lm
	clang $(STD) -g -O1 -fsanitize=fuzzer,address,undefined $(DEFS) \
	  $(INCS) -o $(BUILD)/fuzz/fuzz_http $(FUZZ_HTTP_SRC) $(SERVICE_SRC) \
	  $(EXEC_SRC) $(SIM_SRC) $(SOLVER_SRC) $(PLANNER_SRC) $(MODEL_SRC) \
	  $(COMMON_SRC) -fopenmp -ljansson -lglpk -lm $(LDLIBS_SVC) -lpthread

fuzz: fuzz-build
	tests/fuzz/run.sh $(BUILD)/fuzz/fuzz_inputs $(FUZZ_SECONDS)

fuzz-each: fuzz-build
	@rc=0; for r in $(FUZZ_READERS); do \
	  tests/fuzz/run.sh $(BUILD)/fuzz/fuzz_inputs $(FUZZ_SECONDS) $$r || rc=1; \
	done; \
	tests/fuzz/run.sh $(BUILD)/fuzz/fuzz_http $(FUZZ_SECONDS) http || rc=1; \
	exit $$rc

clean:
	rm -rf build build-asan

help:
	@sed -n '2,/^$$/p' Makefile | sed -e '/^$$/d' -e 's/^# \{0,1\}//'

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
