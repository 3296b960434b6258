# The torch entries of one flavour (tests/torch/CMakeLists.txt includes this once per PyTorch):
#   T             the entries' name prefix: torch (Debian's PyTorch) or torch-<release> (pip's)
#   python        the interpreter that runs the scripts
#   torch_labels  the entries' labels
#   torch_pythonpath  where strata_torch is imported from (empty: the interpreter's own, a pip
#                 install)
#   torch_stress_repeats  how often hook_order.np2 repeats its PowerSGD run
#   torch_stress_hosts_repeats  ... and hook_order.stress.np4.hosts_2_2
#   torch_torchrun  that PyTorch's torchrun, empty where it cannot start workers (Debian's)

# Every operation: 2-17 s an entry with Gloo on 2 busy cores (watchdog 110 s). 4 ranks on one
# host with fewer dtypes and sizes (TORCH_OPS_QUICK): the 4-rank layouts below run them all.
foreach(np 1 2 3)
  strata_add_torch_test(${T}.ops.np${np} SCRIPT test_ops.py NP ${np} TIMEOUT 130)
endforeach()
strata_add_torch_test(${T}.ops.np4 SCRIPT test_ops.py NP 4 TIMEOUT 130 ENV TORCH_OPS_QUICK=1)
strata_add_torch_test(${T}.ops.np4.hosts_2_2 SCRIPT test_ops.py HOSTS a:2 b:2 TIMEOUT 130)
strata_add_torch_test(${T}.ops.np4.hosts_interleaved_2 SCRIPT test_ops.py NP 4 INTERLEAVE 2
  TIMEOUT 130)

# DDP steps against Gloo and a one-process reference; 2 hosts so that fp16_slow_links_hook
# compresses the inter-host stage (2-13 s an entry with Gloo).
foreach(np 1 2 3)
  strata_add_torch_test(${T}.ddp.np${np} SCRIPT test_ddp.py NP ${np} TIMEOUT 120)
endforeach()
strata_add_torch_test(${T}.ddp.np4.hosts_2_2 SCRIPT test_ddp.py HOSTS a:2 b:2 TIMEOUT 120)

# Launched as PyTorch users launch: no mpirun, torchrun's variables set by tools/strata-run,
# and init_process_group("strata") through env:// (TCPStore) or file://; DDP against Gloo on
# 1, 2 and 4 ranks and 2 emulated hosts, every operation on 2+1 hosts, and strata_torch.init()
# taking the environment (never MPI's singleton world).
foreach(np 1 2 4)
  strata_add_torch_launch_test(${T}.ddp.env.np${np} SCRIPT test_ddp.py TIMEOUT 120
    RUN -n ${np} ENV TORCH_TEST_INIT=env)
endforeach()
strata_add_torch_launch_test(${T}.ddp.file.np4.hosts_2_2 SCRIPT test_ddp.py TIMEOUT 120
  RUN --hosts a:2,b:2 ENV TORCH_TEST_INIT=file)
strata_add_torch_launch_test(${T}.ops.env.np3.hosts_2_1 SCRIPT test_ops.py TIMEOUT 130
  RUN --hosts a:2,b:1 ENV TORCH_TEST_INIT=env TORCH_OPS_QUICK=1)
strata_add_torch_launch_test(${T}.ops.init_from_env.np3 SCRIPT test_ops.py TIMEOUT 130
  RUN -n 3 ENV TORCH_TEST_INIT=launcher TORCH_OPS_QUICK=1)
# Under PyTorch's own launcher: torchrun --standalone (a free port of its own), DDP against
# Gloo and the reference on 2 ranks through env://. Not under Debian's torchrun, which crashes
# before starting a worker (tests/torch/CMakeLists.txt).
if(torch_torchrun)
  add_test(NAME ${T}.ddp.torchrun.np2 COMMAND ${torch_torchrun} --standalone --nproc_per_node=2
    ${CMAKE_CURRENT_SOURCE_DIR}/test_ddp.py)
  strata_torch_test_properties(${T}.ddp.torchrun.np2 TIMEOUT 120 ENV TORCH_TEST_INIT=env)
  set_tests_properties(${T}.ddp.torchrun.np2 PROPERTIES
    FAIL_REGULAR_EXPRESSION "STRATA WARN;Traceback")
endif()

# A correct program's teardown is silent (test_teardown.py): DDP steps checked against a
# reference, then README's snippet as is (no destroy_process_group: strata_torch's atexit),
# destroy_process_group() with the DDP model alive, and del model, then destroy; 2 ranks
# started as torchrun starts them, and the first under mpirun (strata_torch.init(), MPI
# finalised at exit). The lines they must not print come after Python's last statement, so
# ctest reads the whole job's output: any "WARN" (strata's warnings, a flight-recorder dump
# among them) or traceback fails the entry; its exit status counts as well.
foreach(order exit destroy del-destroy)
  strata_add_torch_launch_test(${T}.teardown.${order}.np2 SCRIPT test_teardown.py TIMEOUT 90
    RUN -n 2 ENV TORCH_TEST_INIT=env ARGS ${order})
  set_tests_properties(${T}.teardown.${order}.np2 PROPERTIES
    FAIL_REGULAR_EXPRESSION "WARN;Traceback")
endforeach()
strata_add_torch_test(${T}.teardown.exit.mpirun.np2 SCRIPT test_teardown.py NP 2 TIMEOUT 90
  ARGS exit)
set_tests_properties(${T}.teardown.exit.mpirun.np2 PROPERTIES
  FAIL_REGULAR_EXPRESSION "WARN;Traceback")

# Launches strata_torch.init() refuses (test_launch_errors.py): none at all, and an
# environment that contradicts mpirun's ranks.
add_test(NAME ${T}.launch_errors.no_launcher
  COMMAND ${python} ${CMAKE_CURRENT_SOURCE_DIR}/test_launch_errors.py no-launcher)
strata_torch_test_properties(${T}.launch_errors.no_launcher TIMEOUT 60)
strata_add_torch_test(${T}.launch_errors.disagree.np2 SCRIPT test_launch_errors.py NP 2
  TIMEOUT 60 ARGS disagree)
set_tests_properties(${T}.launch_errors.disagree.np2 PROPERTIES
  PASS_REGULAR_EXPRESSION "PASSED: .*PASSED: ")

# PyTorch's stock DDP hooks, 11 buckets a step (PowerSGD waits on a future inside a callback,
# twice per bucket), against Gloo; as launched by mpirun and by torchrun's variables (env://).
foreach(np 1 2 4)
  strata_add_torch_test(${T}.stock_hooks.np${np} SCRIPT test_stock_hooks.py NP ${np}
    TIMEOUT 190)
endforeach()
strata_add_torch_test(${T}.stock_hooks.np4.hosts_2_2 SCRIPT test_stock_hooks.py
  HOSTS a:2 b:2 TIMEOUT 190)
strata_add_torch_launch_test(${T}.stock_hooks.env.np4 SCRIPT test_stock_hooks.py TIMEOUT 190
  RUN -n 4 ENV TORCH_TEST_INIT=env)
# Callbacks that issue collectives and wait for them while the ranks run at different speeds
# (test_hook_order.py): the same order on every rank; PowerSGD with 52 buckets, 20 steps,
# torch_stress_repeats times (torch_stress_hosts_repeats times on 2 hosts of 2).
strata_add_torch_test(${T}.hook_order.np2 SCRIPT test_hook_order.py NP 2 TIMEOUT 260
  ARGS order,stress ${torch_stress_repeats})
strata_add_torch_test(${T}.hook_order.np4.hosts_2_2 SCRIPT test_hook_order.py HOSTS a:2 b:2
  TIMEOUT 260 ARGS order 1)
strata_add_torch_test(${T}.hook_order.stress.np4.hosts_2_2 SCRIPT test_hook_order.py
  HOSTS a:2 b:2 TIMEOUT 260 ARGS stress ${torch_stress_hosts_repeats})
# Hooks that block (test_hook_errors.py, group timeout 5 s): the gate's error, a nested
# collective one rank never issues; every rank raises within the timeout and exits.
foreach(np 1 4)
  strata_add_torch_test(${T}.hook_errors.np${np} SCRIPT test_hook_errors.py NP ${np}
    TIMEOUT 110)
endforeach()

# PyTorch's own distributed suite (pytorch_suite/run_suite.py): distributed_test.py's
# _DistTestBase under PyTorch's multi-process harness (ranks forked per test, file:// init),
# judged against the running PyTorch's expected list (pytorch_suite/expected.txt for 1.13,
# expected-<release>.txt for each PyTorch 2; a release without a list fails): a test off the
# list that fails, or one on it that passes ("now passes, remove from list"), fails the entry.
# 1.13: np2 runs the collective, point-to-point, barrier, group and object tests that need no
# GPU (130), np3 their variants over the subgroup [1, 2] (25); measured on 2 cores: np2 96 s,
# np3 43 s with nothing else running. PyTorch 2 (which runs the subgroup variants only from 8
# ranks): the collective tests and the CPU DDP tests at both sizes (140), 41 s and 70 s idle.
foreach(np 2 3)
  set(name ${T}.pytorch_suite.np${np})
  add_test(NAME ${name} COMMAND ${python} ${CMAKE_CURRENT_SOURCE_DIR}/pytorch_suite/run_suite.py
    --backend ${STRATA_TORCH_TEST_BACKEND} --world-size ${np} --start fork --test-timeout 90)
  strata_torch_test_properties(${name} TIMEOUT 420)
endforeach()

# FSDP2 (fully_shard) and DTensor on CPU meshes whose backend is strata (test_fsdp2.py), against
# the same steps on a Gloo mesh: 2 and 4 ranks, and 2 hosts of 2 (HSDP's replicas across
# them). Exits 77 under PyTorch 1.13, which has no FSDP2; fails from 2.6 without fully_shard.
strata_add_torch_test(${T}.fsdp2.np2 SCRIPT test_fsdp2.py NP 2 TIMEOUT 130)
strata_add_torch_test(${T}.fsdp2.np4 SCRIPT test_fsdp2.py NP 4 TIMEOUT 130)
strata_add_torch_test(${T}.fsdp2.np4.hosts_2_2 SCRIPT test_fsdp2.py HOSTS a:2 b:2 TIMEOUT 130)

# CUDA tensors (test_cuda.py): collectives, stream semantics of async_op/wait, 2 DDP steps;
# both ranks on GPU 0. Skipped (77) where torch.cuda.is_available() is false, as here with
# Debian's CPU-only PyTorch; labelled gpu too, so `ctest -L gpu` runs it on a GPU machine.
# Its watchdog (90 s) fires before this TIMEOUT, which stays below gpu-check.sh's torch phase
# cap, so a hang leaves every rank's stack in the log.
# 5 s before the watchdog each rank's flight recorders print where strata is.
strata_add_torch_test(${T}.cuda.np2 SCRIPT test_cuda.py NP 2 TIMEOUT 120
  ENV STRATA_FLIGHT_RECORDER_SIGNAL=USR1)
set_tests_properties(${T}.cuda.np2 PROPERTIES LABELS "${torch_labels};gpu")

# CUDA graphs (test_cuda_graph.py): all_reduce captured in torch.cuda.graph and replayed 100
# times on one rank (stream-ordered); two ranks sharing GPU 0 have a host stage, and capture is
# refused naming it. Skipped (77) without CUDA; labelled gpu.
strata_add_torch_test(${T}.cuda_graph.np1 SCRIPT test_cuda_graph.py NP 1 TIMEOUT 120)
strata_add_torch_test(${T}.cuda_graph.np2 SCRIPT test_cuda_graph.py NP 2 TIMEOUT 120)
set_tests_properties(${T}.cuda_graph.np1 ${T}.cuda_graph.np2 PROPERTIES
  LABELS "${torch_labels};gpu")

# Asynchrony: rank 0 joins 2 s late; the others' Work must complete while they compute.
strata_add_torch_test(${T}.async.np2 SCRIPT test_async.py NP 2 TIMEOUT 80)
strata_add_torch_test(${T}.async.np4.hosts_2_2 SCRIPT test_async.py HOSTS a:2 b:2 TIMEOUT 80)

# Recovery from a lost rank (test_recovery.py, docs/recovery.md): DDP on CPU tensors, launched
# without MPI; a rank kills itself (SIGKILL) mid-training and the survivors shrink_group
# (SHRINK_ABORT), rebuild DDP and train on, the loss still falling. strata-run --survive-loss
# keeps the others running when a rank is killed. PyTorch 2 only (shrink_group; 77 under 1.13).
strata_add_torch_launch_test(${T}.recovery.np4 SCRIPT test_recovery.py TIMEOUT 60
  RUN --survive-loss -n 4 ENV TORCH_TEST_INIT=env)
strata_add_torch_launch_test(${T}.recovery.np4.hosts_2_2 SCRIPT test_recovery.py TIMEOUT 60
  RUN --survive-loss --hosts a:2,b:2 ENV TORCH_TEST_INIT=env TORCH_RECOVERY_VICTIM=1)

# Bad arguments, and ranks that call different collectives under a 5 s group timeout: one
# host, 2 hosts, and with STRATA_CHECK=1 (strata compares the calls, so it may fail sooner).
strata_add_torch_test(${T}.errors.np1 SCRIPT test_errors.py NP 1 TIMEOUT 110)
strata_add_torch_test(${T}.errors.np4 SCRIPT test_errors.py NP 4 TIMEOUT 110)
strata_add_torch_test(${T}.errors.np4.hosts_2_2 SCRIPT test_errors.py HOSTS a:2 b:2
  TIMEOUT 110)
strata_add_torch_test(${T}.errors.np3.check SCRIPT test_errors.py NP 3 TIMEOUT 110
  ENV STRATA_CHECK=1)

# The example as a user runs it (examples/torch/train_ddp.py): a short digits training on 2
# emulated hosts through each hook; it must finish, print its loss per epoch, and warn of
# nothing (its teardown, destroy_process_group with the DDP model alive, is silent).
foreach(hook none fused fp16 csc)
  set(name ${T}.example.train_ddp.${hook})
  strata_mpi_command(command HOSTS a:2 b:2 COMMAND ${python}
    ${PROJECT_SOURCE_DIR}/examples/torch/train_ddp.py --backend strata --model digits
    --hook ${hook} --epochs 2 --calib 2)
  add_test(NAME ${name} COMMAND ${command})
  strata_torch_test_properties(${name} TIMEOUT 120)
  set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "epoch +2" FAIL_REGULAR_EXPRESSION "Traceback|nan|WARN")
endforeach()
