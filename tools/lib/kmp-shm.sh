# Sourced by the clang stages (tools/run-sanitizers.sh, tools/run-fuzz.sh).
#
# clang's OpenMP runtime (LLVM 14's libomp) registers each process in /dev/shm as
# __KMP_REGISTERED_LIB_<pid>_<uid>: shm_open(O_CREAT|O_EXCL), then ftruncate to 1 KiB. Files left
# empty (0 bytes) by processes that died between the two outlive them, and /dev/shm is shared
# between this machine's sessions and CI runs. The next process that gets the same pid opens the
# existing file, maps 1 KiB of an empty file and dies of SIGBUS inside libomp before main (CI,
# 2026-11-28: test_mbs_fe_sets under ASan, pid 32326, whose empty file was 3 hours old). With
# pid_max 32768 and thousands of test processes a stage, pids wrap within one run. An empty
# registration file older than a few seconds is always such a leftover (a live process truncates
# it microseconds after creating it), so the stages remove them before and, every second, while
# they run. Our own code is not involved; docs/decisions.md.

kmp_shm_sweep() {
  [ -d /dev/shm ] || return 0
  find /dev/shm -maxdepth 1 -name '__KMP_REGISTERED_LIB_*' -type f -size 0 -user "$(id -u)" \
    ! -newermt '-3 seconds' -delete 2>/dev/null || true
}

# kmp_shm_guard_start: sweep now and every second in the background until kmp_shm_guard_stop
kmp_shm_guard_start() {
  kmp_shm_sweep
  (while sleep 1; do kmp_shm_sweep; done) >/dev/null 2>&1 &
  KMP_SHM_GUARD_PID=$!
}

kmp_shm_guard_stop() {
  [ -n "${KMP_SHM_GUARD_PID:-}" ] || return 0
  kill "$KMP_SHM_GUARD_PID" 2>/dev/null || true
  wait "$KMP_SHM_GUARD_PID" 2>/dev/null || true
  KMP_SHM_GUARD_PID=
}
