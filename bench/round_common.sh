# What the oracle's round drivers share (bench/round34.sh to round47.sh):
# sourced by them, never run. The driver sets `here` (bench/), `R`
# (bench/results) and `tula` (the binary).

# oracle SEED ARGS...: decision_oracle.py at SEED on round_case's case (its
# model flags `M` and work folder), with the round's profile cache. A driver
# whose case is not round_case's defines its own after sourcing this file.
oracle() {
  /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work" --profile-cache --seeds "$@"
}

# round_case MODEL N FROM SMALL_CNN_SEEDS LENET_SEEDS: round N's case of MODEL
# (small_cnn to 83%, or LeNet-5 to 86% in at most 12 epochs): sets `work` (its
# work folder), `name` (its rows in $R/NAME.jsonl), `seeds` (as given, comma
# separated), `M` (decision_oracle.py's model flags) and `source_history`
# (round FROM's history of the same case).
round_case() {
  local model=$1 n=$2 from=$3
  if [ "$model" = small_cnn ]; then
    work=/tmp/tula-oracle-round$n; name=decision_oracle_round$n; seeds=$4; M=()
    source_history="$R/decision_oracle_round$from/history.jsonl"
  else
    work=/tmp/tula-oracle-round$n-lenet; name=decision_oracle_round${n}_lenet86; seeds=$5
    source_history="$R/decision_oracle_round${from}_lenet86/history.jsonl"
    M=(--model lenet5 --target 0.86 --max-epochs 12)
  fi
}

# round_folders WORK NAME SOURCE_HISTORY: the round's folders, and its job
# history, a copy of SOURCE_HISTORY (made once).
round_folders() {
  local work=$1 name=$2 source_history=$3
  mkdir -p "$work" "$R/$name"
  [ -f "$R/$name/history.jsonl" ] || cp "$source_history" "$R/$name/history.jsonl"
}

# first_jobs_round N FROM SMALL_CNN_SEEDS LENET_SEEDS: a round of first jobs
# (rounds 37 and 38): for each model, the knee job measuring its own profile
# and the oracle's knee beside it at each seed, rotated (decision_oracle.py's
# headline, methods c and d), the history a copy of round FROM's.
first_jobs_round() {
  local n=$1 from=$2 small_cnn_seeds=$3 lenet_seeds=$4 model
  for model in lenet5 small_cnn; do
    round_case "$model" "$n" "$from" "$small_cnn_seeds" "$lenet_seeds"
    round_folders "$work" "$name" "$source_history"
    /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "${M[@]}" --work "$work" \
      --phases headline --headline-methods c,d --seeds "$seeds" --out "$R/$name.jsonl" \
      --tune-extra="--history $R/$name/history.jsonl"
  done
}

# round_setup MODEL WORK NAME SOURCE_HISTORY: round_folders, and the quick
# profile a first job measures, measured once into WORK's cache where the
# round's jobs look, its log kept beside the rows.
round_setup() {
  local model=$1 work=$2 name=$3 source_history=$4
  round_folders "$work" "$name" "$source_history"
  [ -f "$work/profile.json" ] ||
    TULA_CACHE_DIR="$work/cache" "$tula" profile --quick --cache --model "$model" --dataset fashion-mnist \
      --time-budget 120 --out "$work/profile.json" >"$work/profile.log" 2>&1
  [ -f "$R/$name/profile_fill.log" ] || cp "$work/profile.log" "$R/$name/profile_fill.log"
}

# rotated N ARM...: the arms in an order rotated by N.
rotated() {
  local n=$1
  shift
  local arms=("$@")
  local k=$((n % ${#arms[@]}))
  echo "${arms[@]:k}" "${arms[@]:0:k}"
}

# objective_arm OBJECTIVE ARM SEED NAME CONFIG: one run of a round grading
# OBJECTIVE at SEED, its rows in NAME.jsonl: `job` (tula tune --objective
# OBJECTIVE, reading NAME's history), `d` (the oracle's best configuration for
# it, CONFIG as TYPE:NODES:BATCH, AGS) or `repeat` (d again, into
# NAME_repeat.jsonl: the spread of two runs of the same steps).
objective_arm() {
  local objective=$1 arm=$2 seed=$3 name=$4 config=$5
  case "$arm" in
    job) oracle "$seed" --out "$R/$name.jsonl" --phases tune --objectives "$objective" \
           --tune-extra="--history $R/$name/history.jsonl" ;;
    d) oracle "$seed" --out "$R/$name.jsonl" --phases headline --headline-methods d --headline-knee "$config" ;;
    repeat) oracle "$seed" --out "$R/${name}_repeat.jsonl" --phases headline --headline-methods d \
              --headline-knee "$config" ;;
  esac
}

# fastest_arm ARM SEED NAME [FASTEST]: objective_arm for the fastest objective,
# the oracle's fastest 2 x emu-one at 64 unless given.
fastest_arm() { objective_arm fastest "$1" "$2" "$3" "${4:-emu-one:2:64}"; }

# objective_seeds OBJECTIVE CONFIG: at each of round_case's `seeds`, the job,
# (d) = CONFIG and (d)'s repeat (objective_arm), in an order rotated by seed.
objective_seeds() {
  local objective=$1 config=$2 i=0 seed arm
  for seed in ${seeds//,/ }; do
    for arm in $(rotated "$i" job d repeat); do objective_arm "$objective" "$arm" "$seed" "$name" "$config"; done
    i=$((i + 1))
  done
}

# objective_case ROUND OBJECTIVE CONFIG FROM MODEL SEEDS MODEL_FLAGS...: round
# ROUND's case of OBJECTIVE on MODEL (rounds 49, 51 and 52): its folders, its
# history a copy of round FROM's, its profile measured once, then
# objective_seeds against CONFIG (TYPE:NODES:BATCH).
objective_case() {
  local round=$1 objective=$2 config=$3 from=$4 model=$5
  seeds=$6
  shift 6
  M=("$@")
  name=decision_oracle_round${round}_${objective}_$model
  work=/tmp/tula-oracle-round$round-$model
  round_setup "$model" "$work" "$name" "$R/decision_oracle_round${from}_$model/history.jsonl"
  objective_seeds "$objective" "$config"
}

# objective_round N FROM SMALL_CNN_SEEDS LENET_SEEDS OBJECTIVE SMALL_CNN_CONFIG
# LENET_CONFIG: a round grading OBJECTIVE on later jobs (rounds 42-44): for
# each case with seeds (LeNet-5 first; "" leaves a case out), round_case,
# round_setup (the profile measured once into the round's cache) and
# objective_seeds against that case's CONFIG, the history a copy of round
# FROM's.
objective_round() {
  local n=$1 from=$2 objective=$5 config model
  for model in lenet5 small_cnn; do
    round_case "$model" "$n" "$from" "$3" "$4"
    [ -n "$seeds" ] || continue
    round_setup "$model" "$work" "$name" "$source_history"
    [ "$model" = lenet5 ] && config=$7 || config=$6
    objective_seeds "$objective" "$config"
  done
}

# knee_arm ARM SEED: one run of the knee case set by knee_case (`name`,
# `knee`) at SEED into $R/$name.jsonl: `job` (the knee job, reading the
# case's history), `a` (the default) or `d` (the oracle's knee, `knee` as
# TYPE:NODES:BATCH).
knee_arm() {
  case "$1" in
    job) oracle "$2" --out "$R/$name.jsonl" --phases tune --objectives knee \
           --tune-extra="--history $R/$name/history.jsonl" ;;
    a) oracle "$2" --out "$R/$name.jsonl" --phases headline --headline-methods a ;;
    d) oracle "$2" --out "$R/$name.jsonl" --phases headline --headline-methods d --headline-knee "$knee" ;;
  esac
}

# knee_case ROUND MODEL SEEDS KNEE FROM_HISTORY MODEL_FLAGS...: round ROUND's
# knee case of MODEL (rounds 46 and 47): its folders, its history a copy of
# FROM_HISTORY, its profile measured once, then job, (a) and (d) at each seed,
# rotated.
knee_case() {
  local round=$1 model=$2 i=0 seed arm
  seeds=$3 knee=$4
  local from_history=$5
  shift 5
  M=("$@")
  name=decision_oracle_round${round}_$model
  work=/tmp/tula-oracle-round$round-$model
  round_setup "$model" "$work" "$name" "$from_history"
  for seed in ${seeds//,/ }; do
    for arm in $(rotated "$i" job a d); do knee_arm "$arm" "$seed"; done
    i=$((i + 1))
  done
}

# first_jobs ROUND MODEL SEEDS KNEE MODEL_FLAGS...: round ROUND's first jobs
# of MODEL (rounds 54 and 57): the knee job with no history and no cached
# profile, and (d) = KNEE at each seed (decision_oracle.py's headline, methods
# c and d, rotated).
first_jobs() {
  local round=$1 model=$2 seeds=$3 knee=$4
  shift 4
  local name=decision_oracle_round${round}_first_$model
  /usr/bin/python3 "$here/decision_oracle.py" --tula "$tula" "$@" --work "/tmp/tula-oracle-round$round-first-$model" \
    --phases headline --headline-methods c,d --headline-knee "$knee" --seeds "$seeds" --out "$R/$name.jsonl"
}

# headline_case ROUND MODEL SEEDS KNEE RATES FROM_HISTORY MODEL_FLAGS...:
# round ROUND's headline (rounds 53 and 56): its folders, its history a copy
# of FROM_HISTORY, its profile measured once, (b)'s screen at RATES (seed 0),
# then (a), (b), the knee job and (d) = KNEE at each seed, rotated by
# decision_oracle.py's headline phase.
headline_case() {
  local round=$1 model=$2 seeds=$3 knee=$4 rates=$5 from_history=$6
  shift 6
  M=("$@")
  name=decision_oracle_round${round}_headline_$model
  work=/tmp/tula-oracle-round$round-$model
  round_setup "$model" "$work" "$name" "$from_history"
  oracle 0 --out "$R/$name.jsonl" --phases b-screen --b-rates "$rates"
  oracle "$seeds" --out "$R/$name.jsonl" --phases headline --b-rates "$rates" --headline-knee "$knee" \
    --tune-extra="--history $R/$name/history.jsonl"
}
