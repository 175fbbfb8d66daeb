# Sourced by scripts/time_make_test.sh and scripts/time_ci.sh: clone this repository into a new
# temporary folder, cd into the clone and set up its .venv (timed apart, with pip's cache as CI
# keeps it). Sets root, dir (the clone is $dir/fastcdl, logs go beside it), TIMEFORMAT ('%R %U
# %S' for bash's `time`), load0 (the load before), install_wall and load1 (the load after the setup).
root=$(git rev-parse --show-toplevel)
dir=$(mktemp -d)
git clone -q "$root" "$dir/fastcdl"
cd "$dir/fastcdl"
TIMEFORMAT='%R %U %S'
load0=$(cut -d' ' -f1 /proc/loadavg)
read -r install_wall _ _ < <({ time make .venv/.installed > "$dir/install.log" 2>&1; } 2>&1)
load1=$(cut -d' ' -f1 /proc/loadavg)
