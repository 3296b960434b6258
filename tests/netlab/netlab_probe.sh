# Sourced by the tests that need tools/netlab: netlab_probe_or_skip calls the caller's
# `skip MESSAGE` (which exits 77, ctest's skip) unless this machine can make network namespaces
# and veth links. Only trying tells: root in a container may lack CAP_SYS_ADMIN (namespaces) or
# CAP_NET_ADMIN (links), or /run/netns may be read-only.
netlab_probe_or_skip() {
  command -v ip >/dev/null || skip "no 'ip' command (iproute2)"
  local probe="nlprobe-$$" err
  if ! err=$(ip netns add "$probe" 2>&1); then
    skip "cannot create network namespaces here: $err"
  fi
  if ! err=$(ip -n "$probe" link add pa type veth peer name pb 2>&1); then
    ip netns del "$probe"
    skip "cannot create veth links in a network namespace here: $err"
  fi
  ip netns del "$probe"
}
