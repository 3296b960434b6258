# netlab's network (sourced by tools/netlab): whether this machine can hold a lab, and the lab
# itself, built, updated and removed: namespaces, veth links to a bridge, and tc's shaping of
# each link direction.
# shellcheck shell=bash

# --- capability probes ---------------------------------------------------------------------

# check_machine DELAY_US: fail clearly, before anything is made, unless this machine can hold a
# lab: namespaces, veth links and a bridge, tbf, and netem when a delay is asked for. Only
# trying tells: uid 0 in a container may lack CAP_SYS_ADMIN (namespaces) or CAP_NET_ADMIN
# (links), and a kernel built without a qdisc says so only when one is added. The tries happen
# in a throwaway namespace.
check_machine() {
  command -v ip >/dev/null || die "needs the 'ip' command (Debian package iproute2)"
  command -v tc >/dev/null || die "needs the 'tc' command (Debian package iproute2)"
  command -v unshare >/dev/null || die "needs the 'unshare' command (Debian package util-linux)"
  local probe="netlab-probe-$$" err
  if ! err=$(ip netns add "$probe" 2>&1); then
    die "needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) to create network namespaces: 'ip netns add' says: $err"
  fi
  # A subshell, so that its EXIT trap removes the probe however the checks end.
  (
    trap 'ip netns del "$probe" 2>/dev/null || true' EXIT
    err=$(ip -n "$probe" link add pa type veth peer name pb 2>&1) ||
      die "cannot create a veth link in a network namespace (needs CAP_NET_ADMIN and a kernel with CONFIG_VETH): 'ip link add' says: $err"
    err=$(ip -n "$probe" link add pbr type bridge 2>&1) ||
      die "cannot create a bridge (needs a kernel with CONFIG_BRIDGE): 'ip link add' says: $err"
    try_qdisc tbf "shaping the rate needs the tbf qdisc (module sch_tbf, CONFIG_NET_SCH_TBF)" "" \
      tbf rate 1gbit burst 128kb latency 20ms
    if [ "$1" != 0 ]; then
      try_qdisc netem "--delay needs the netem qdisc (module sch_netem, CONFIG_NET_SCH_NETEM)" \
        "; use --delay 0 on this machine" netem delay 1ms
    fi
  ) || exit 1
}

# try_qdisc KIND WHY HINT QDISC-ARGS...: add and remove a qdisc on the probe's veth; on failure
# load its module once (if modprobe exists) and try again, then give up with WHY, tc's words
# and HINT.
try_qdisc() {
  local kind=$1 why=$2 hint=$3 err
  shift 3
  if err=$(ip netns exec "$probe" tc qdisc add dev pa root "$@" 2>&1); then
    ip netns exec "$probe" tc qdisc del dev pa root
    return 0
  fi
  if command -v modprobe >/dev/null && modprobe "sch_$kind" 2>/dev/null &&
    err=$(ip netns exec "$probe" tc qdisc add dev pa root "$@" 2>&1); then
    ip netns exec "$probe" tc qdisc del dev pa root
    return 0
  fi
  die "$why, which this kernel lacks (tc: $err)$hint"
}

# --- shaping ---------------------------------------------------------------------------------

# shape NS DEV RATE_BITS HALF_DELAY_US: one direction of one link, on the egress of DEV.
# tbf limits the rate; its burst is 1 ms at the rate, and at least 128 KiB so that a 64 KiB
# GSO packet from veth passes whole instead of being split in software. netem, when there is a
# delay, sits above tbf (the order netem's manual gives) and holds each packet for the delay.
shape() {
  local ns=$1 dev=$2 bits=$3 half_us=$4 burst
  burst=$(awk -v b="$bits" 'BEGIN { x = b / 8 / 1000; if (x < 131072) x = 131072; printf "%.0f\n", x }')
  # Start from nothing: changing a qdisc in place keeps old children, which would keep a delay
  # after a reconfiguration to --delay 0.
  ip netns exec "$ns" tc qdisc del dev "$dev" root 2>/dev/null || true
  if [ "$half_us" = 0 ]; then
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: \
      tbf rate "${bits}bit" burst "$burst" latency 20ms
  else
    # netem's default limit of 1000 packets would drop at high rate x delay.
    ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: \
      netem delay "${half_us}us" limit 100000
    ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:1 handle 10: \
      tbf rate "${bits}bit" burst "$burst" latency 20ms
  fi
}

# --- building and removing a lab -------------------------------------------------------------

# add_host NAME I PREFIX: host namespace I with eth0 = PREFIX.I/24, linked to the bridge. The
# veth pair is created directly between the two lab namespaces, never in the root namespace.
add_host() {
  local name=$1 i=$2 prefix=$3 sw ns want have
  sw=$(sw_ns "$name")
  ns=$(host_ns "$name" "$i")
  ns_exists "$ns" || ip netns add "$ns"
  ip -n "$ns" link set lo up
  # No IPv6: its neighbour discovery would only add stray packets to the shaped links.
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
  if ! ip -n "$ns" link show eth0 >/dev/null 2>&1; then
    ip -n "$sw" link del "h$i" 2>/dev/null || true # a stale bridge port from a removed host
    ip -n "$sw" link add "h$i" type veth peer name eth0 netns "$ns"
  fi
  ip -n "$sw" link set "h$i" master br0 up
  want="$prefix.$i/24"
  have=$(ip -n "$ns" -4 -o addr show dev eth0 | awk '{ print $4 }' | tr '\n' ' ')
  if [ "$have" != "$want " ]; then
    ip -n "$ns" addr flush dev eth0
    ip -n "$ns" addr add "$want" dev eth0
  fi
  ip -n "$ns" link set eth0 up
}

# lab_up NAME HOSTS RATE DELAY SUBNET: empty arguments keep the lab's current value (or the
# default for a new lab).
lab_up() {
  local name=$1 hosts=$2 rate=$3 delay=$4 subnet=$5
  check_name "$name"
  load_state "$name"
  if ! lab_exists "$name"; then SUBNET="" HOSTS=""; fi
  hosts=${hosts:-${HOSTS:-$DEFAULT_HOSTS}}
  rate=${rate:-${RATE:-$DEFAULT_RATE}}
  delay=${delay:-${DELAY:-$DEFAULT_DELAY}}
  in_range "$hosts" 1 "$MAX_HOSTS" || die "bad host count '$hosts': use 1..$MAX_HOSTS"
  local bits us half_us
  bits=$(rate_bits "$rate")
  ((bits >= 8000)) || die "rate '$rate' is too low: use at least 8kbit"
  us=$(delay_us "$delay")
  half_us=$(awk -v u="$us" 'BEGIN { print plain(u / 2) }'"$AWK_PLAIN")
  check_machine "$us"

  mkdir -p "$STATE_DIR"
  # One netlab at a time changes labs, so two never pick the same subnet.
  exec 9>"$STATE_DIR/.lock"
  flock 9
  if [ -n "$subnet" ]; then
    in_range "$subnet" 0 511 || die "bad subnet index '$subnet': use 0..511"
  else
    subnet=${SUBNET:-$(free_subnet "$name")}
  fi
  local prefix sw created=0
  prefix=$(subnet_prefix "$subnet")
  sw=$(sw_ns "$name")

  if ! lab_exists "$name"; then
    created=1
    # A half-built new lab is worse than none: on_exit removes it if a step below fails.
    PARTIAL_LAB=$name
    ip netns add "$sw"
  fi
  ip -n "$sw" link set lo up
  ip netns exec "$sw" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
  if ! ip -n "$sw" link show br0 >/dev/null 2>&1; then
    # forward_delay 0: ports forward at once instead of after STP's listening/learning wait.
    ip -n "$sw" link add br0 type bridge forward_delay 0 stp_state 0
  fi
  ip -n "$sw" link set br0 up

  local i
  for ((i = 1; i <= hosts; i++)); do add_host "$name" "$i" "$prefix"; done
  # Hosts beyond the new count go, with their links (deleting a namespace deletes its veth end,
  # and the peer with it).
  for i in $(lab_hosts "$name"); do
    ((i > hosts)) || continue
    stop_processes "$(host_ns "$name" "$i")"
    ip netns del "$(host_ns "$name" "$i")"
  done
  for ((i = 1; i <= hosts; i++)); do
    shape "$(host_ns "$name" "$i")" eth0 "$bits" "$half_us" # upload: host -> bridge
    shape "$sw" "h$i" "$bits" "$half_us"                     # download: bridge -> host
  done
  printf 'SUBNET=%s\nRATE=%s\nDELAY=%s\nHOSTS=%s\n' "$subnet" "$rate" "$delay" "$hosts" \
    >"$(state_file "$name")"
  # shellcheck disable=SC2034  # tools/netlab's on_exit reads it
  PARTIAL_LAB=""
  exec 9>&- # unlocks; mpirun must not inherit the lock
  echo "netlab: lab $name $([ $created = 1 ] && echo created || echo updated): $hosts host$( ((hosts == 1)) || echo s) on $prefix.0/24, rate $rate each way, delay $delay one-way"
}

# stop_processes NS: a process left in a namespace (say, an orted of a crashed job) would keep
# the namespace alive after `ip netns del`, detached and invisible.
stop_processes() {
  local pids
  pids=$(ip netns pids "$1" 2>/dev/null | tr '\n' ' ') || true
  [ -n "${pids// /}" ] || return 0
  note "stopping processes still running in $1: $pids"
  # shellcheck disable=SC2086  # one pid per word
  kill -TERM $pids 2>/dev/null || true
  sleep 1
  pids=$(ip netns pids "$1" 2>/dev/null | tr '\n' ' ') || true
  # shellcheck disable=SC2086
  [ -z "${pids// /}" ] || kill -KILL $pids 2>/dev/null || true
}

lab_down() {
  local name=$1 i ns removed=0
  for i in $(lab_hosts "$name"); do
    ns=$(host_ns "$name" "$i")
    stop_processes "$ns"
    ip netns del "$ns" && removed=$((removed + 1))
  done
  ns=$(sw_ns "$name")
  if ns_exists "$ns"; then
    stop_processes "$ns"
    ip netns del "$ns" && removed=$((removed + 1))
  fi
  rm -f "$(state_file "$name")"
  if ((removed)); then
    echo "netlab: lab $name removed ($removed namespaces)"
  else
    echo "netlab: no lab $name, nothing to remove"
  fi
}
