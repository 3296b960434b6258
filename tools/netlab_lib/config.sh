# netlab's configuration of a lab (sourced by tools/netlab): the names of its namespaces and
# addresses, its saved settings (the state file), and the parsing of the parameters a user gives
# (rate, delay, counts). Nothing here changes the machine.
# shellcheck shell=bash

# --- names and addresses -------------------------------------------------------------------

check_name() {
  [[ "$1" =~ ^[A-Za-z0-9_]{1,12}$ ]] ||
    die "bad lab name '$1': use 1-12 letters, digits or '_' (it prefixes namespace names)"
}
sw_ns() { echo "$1-sw"; }
host_ns() { echo "$1-h$2"; }
# subnet_prefix K: the first three octets of subnet K of 198.18.0.0/15.
subnet_prefix() { echo "198.$((18 + $1 / 256)).$(($1 % 256))"; }
state_file() { echo "$STATE_DIR/$1.env"; }

ns_exists() { [ -e "/run/netns/$1" ]; }
lab_exists() { ns_exists "$(sw_ns "$1")"; }
# lab_hosts NAME: the indices of the lab's host namespaces, ascending.
lab_hosts() {
  local ns
  for ns in /run/netns/"$1"-h*; do
    [ -e "$ns" ] || continue
    ns=${ns##*/}
    [[ "$ns" =~ ^$1-h([0-9]+)$ ]] && echo "${BASH_REMATCH[1]}"
  done | sort -n
}
# lab_names: every lab that has a bridge namespace.
lab_names() {
  local ns
  for ns in /run/netns/*-sw; do
    [ -e "$ns" ] || continue
    ns=${ns##*/}
    echo "${ns%-sw}"
  done
}

# load_state NAME: sets SUBNET, RATE, DELAY, HOSTS from the lab's state file (empty if none).
# shellcheck disable=SC2034  # tools/netlab and network.sh read RATE, DELAY and HOSTS
load_state() {
  SUBNET="" RATE="" DELAY="" HOSTS=""
  local f
  f=$(state_file "$1")
  [ -r "$f" ] || return 0
  local key value
  while IFS='=' read -r key value; do
    case "$key" in
      SUBNET) SUBNET=$value ;; RATE) RATE=$value ;; DELAY) DELAY=$value ;; HOSTS) HOSTS=$value ;;
    esac
  done <"$f"
}

# free_subnet NAME: the lowest subnet index that no other lab's state file claims.
free_subnet() {
  local used=" " f k
  for f in "$STATE_DIR"/*.env; do
    if [ ! -r "$f" ] || [ "$f" = "$(state_file "$1")" ]; then continue; fi
    k=$(sed -n 's/^SUBNET=//p' "$f")
    used+="$k "
  done
  for ((k = 0; k < 512; k++)); do
    [[ "$used" == *" $k "* ]] || {
      echo "$k"
      return
    }
  done
  die "all 512 lab subnets of 198.18.0.0/15 are in use"
}

# resolve_host NAME HOST: the namespace of HOST, given as an index, an address or a namespace.
resolve_host() {
  local name=$1 host=$2 i="" prefix
  load_state "$name"
  if [[ "$host" =~ ^[0-9]+$ ]]; then
    i=$host
  elif [[ "$host" =~ ^$name-h([0-9]+)$ ]]; then
    i=${BASH_REMATCH[1]}
  elif [[ "$host" =~ ^([0-9]+[.][0-9]+[.][0-9]+)[.]([0-9]+)$ ]]; then
    prefix=$(subnet_prefix "${SUBNET:-0}")
    [ "${BASH_REMATCH[1]}" = "$prefix" ] || die "host $host is not in lab $name's subnet $prefix.0/24"
    i=${BASH_REMATCH[2]}
  fi
  if [ -z "$i" ] || ! ns_exists "$(host_ns "$name" "$i")"; then die "no host '$host' in lab $name"; fi
  host_ns "$name" "$i"
}

# --- parameter parsing ---------------------------------------------------------------------

# in_range N LO HI: whether N is a decimal integer in LO..HI.
in_range() { [[ "$1" =~ ^[0-9]{1,6}$ ]] && (($1 >= $2 && $1 <= $3)); }

# rate_bits R: R (a tc rate such as 2gbit or 500mbps) in bits per second. tc uses SI prefixes.
rate_bits() {
  [[ "$1" =~ ^([0-9]+([.][0-9]+)?)(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)$ ]] ||
    die "bad rate '$1': use a number and a tc unit: bit, kbit, mbit, gbit, tbit (bits/s) or bps, kbps, mbps, gbps (bytes/s), e.g. 2gbit"
  local scale
  case "${BASH_REMATCH[3]}" in
    bit) scale=1 ;; kbit) scale=1e3 ;; mbit) scale=1e6 ;; gbit) scale=1e9 ;; tbit) scale=1e12 ;;
    bps) scale=8 ;; kbps) scale=8e3 ;; mbps) scale=8e6 ;; gbps) scale=8e9 ;; tbps) scale=8e12 ;;
  esac
  awk -v n="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { printf "%.0f\n", n * s }'
}

# An awk function: a number without exponent, and without decimals when it is whole (so that
# "no delay" is exactly 0).
readonly AWK_PLAIN='
function plain(x) { return x == int(x) ? sprintf("%d", x) : sprintf("%.3f", x) }'

# delay_us D: D (e.g. 0.2ms, 50us, 0) in microseconds, possibly fractional.
delay_us() {
  [[ "$1" =~ ^([0-9]+([.][0-9]+)?)(us|ms|s)?$ ]] ||
    die "bad delay '$1': use a number and us, ms or s, e.g. 0.2ms"
  local scale
  case "${BASH_REMATCH[3]}" in
    us) scale=1 ;; ms) scale=1e3 ;; s) scale=1e6 ;;
    "") [[ "${BASH_REMATCH[1]}" =~ ^0+([.]0+)?$ ]] || die "bad delay '$1': give a unit (us, ms, s)"
        scale=1 ;;
  esac
  awk -v n="${BASH_REMATCH[1]}" -v s="$scale" 'BEGIN { print plain(n * s) }'"$AWK_PLAIN"
}
