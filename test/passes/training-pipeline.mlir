// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=elaborate})' | FileCheck %s --check-prefix=ELABORATE
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=autodiff})' | FileCheck %s --check-prefix=AUTODIFF
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=lower})' | FileCheck %s --check-prefix=LOWER
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=schedule})' | FileCheck %s --check-prefix=SCHEDULE
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=in-place})' | FileCheck %s --check-prefix=INPLACE
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=plan})' | FileCheck %s --check-prefix=PLAN
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=plan})' -o %t.plan.mlir
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline)' -o %t.verify.mlir
// RUN: diff %t.plan.mlir %t.verify.mlir
// RUN: cairn-opt %s --cairn-training-pipeline='stop-after=plan' -o %t.flag.mlir
// RUN: diff %t.plan.mlir %t.flag.mlir
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{reuse=false})' | FileCheck %s --check-prefix=NOREUSE
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{reorder=false})' | FileCheck %s --check-prefix=NOREORDER
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{step=forward})' | FileCheck %s --check-prefix=FORWARD
// RUN: cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{target=cuda plan-seconds=0})' | FileCheck %s --check-prefix=CUDA
// RUN: cairn build %S/Inputs/tiny-mlp.cairn --emit=mlir | cairn-opt --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=fuse})' | FileCheck %s --check-prefix=FUSE
// RUN: cairn build %S/Inputs/tiny-mlp.cairn --emit=mlir | cairn-opt --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=fuse fuse=false})' | FileCheck %s --check-prefix=NOFUSE
// RUN: not cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{stop-after=emit})' 2>&1 | FileCheck %s --check-prefix=BAD-STAGE
// RUN: not cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{target=tpu})' 2>&1 | FileCheck %s --check-prefix=BAD-TARGET
// RUN: not cairn-opt %s --pass-pipeline='builtin.module(cairn-training-pipeline{step=both_steps})' 2>&1 | FileCheck %s --check-prefix=BAD-STEP

// The registered pipeline (passes/Pipeline.cpp) on the frontend's module
// for test/passes/Inputs/tiny-mlp.cairn (`cairn build --emit=mlir
// --stop-after=elaborate`), with tanh for its relu: a relu right after a
// linear is what element-wise fusion folds into the linear, and this test
// is about the stages, which tanh goes through unchanged. Each stop-after
// stage leaves what its pass makes, the default runs every stage up to the
// verifier (the same IR as stop-after=plan), and the options reach the
// passes.

// Tests that each stage and option of the pipeline does its part.
module attributes {cairn.batch = 4 : i64, cairn.model = "Tiny", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<4x2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>} loc("tiny.cairn":6:3),
                     %w1: tensor<16x8xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>} loc("tiny.cairn":9:9),
                     %b1: tensor<16xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>} loc("tiny.cairn":9:9),
                     %w2: tensor<3x16xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>} loc("tiny.cairn":10:9),
                     %b2: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.bias", cairn.role = #cairn.role<param>} loc("tiny.cairn":10:9)) -> tensor<4x3xf32> {
    %0 = cairn.reshape %x : tensor<4x2x4xf32> -> tensor<4x8xf32> loc("tiny.cairn":13:18)
    %1 = cairn.linear %0, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc1"("tiny.cairn":13:14))
    %2 = cairn.tanh %1 : tensor<4x16xf32> loc("tiny.cairn":13:9)
    %3 = cairn.linear %2, %w2, %b2 : (tensor<4x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<4x3xf32> loc("fc2"("tiny.cairn":14:12))
    return %3 : tensor<4x3xf32> loc("tiny.cairn":12:3)
  } loc("tiny.cairn":12:3)
  func.func @loss(%x: tensor<4x2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>} loc("tiny.cairn":6:3),
                  %y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>} loc("tiny.cairn":7:3),
                  %w1: tensor<16x8xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.weight", cairn.role = #cairn.role<param>} loc("tiny.cairn":9:9),
                  %b1: tensor<16xf32> {cairn.init = #cairn.init<uniform, 0.35355339059327373>, cairn.name = "fc1.bias", cairn.role = #cairn.role<param>} loc("tiny.cairn":9:9),
                  %w2: tensor<3x16xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.weight", cairn.role = #cairn.role<param>} loc("tiny.cairn":10:9),
                  %b2: tensor<3xf32> {cairn.init = #cairn.init<uniform, 0.25>, cairn.name = "fc2.bias", cairn.role = #cairn.role<param>} loc("tiny.cairn":10:9)) -> tensor<f32> {
    %0 = cairn.reshape %x : tensor<4x2x4xf32> -> tensor<4x8xf32> loc("tiny.cairn":13:18)
    %1 = cairn.linear %0, %w1, %b1 : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("fc1"("tiny.cairn":13:14))
    %2 = cairn.tanh %1 : tensor<4x16xf32> loc("tiny.cairn":13:9)
    %3 = cairn.linear %2, %w2, %b2 : (tensor<4x16xf32>, tensor<3x16xf32>, tensor<3xf32>) -> tensor<4x3xf32> loc("fc2"("tiny.cairn":14:12))
    %4 = cairn.cross_entropy %3, %y {label_smoothing = 0.000000e+00 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32> loc("tiny.cairn":17:12)
    return %4 : tensor<f32> loc("tiny.cairn":16:3)
  } loc("tiny.cairn":16:3)
} loc("tiny.cairn":4:1)

// `elaborate` names the frontend's output: no pass runs.
// ELABORATE:     func.func @forward(
// ELABORATE:     func.func @loss(
// ELABORATE-NOT: func.func @train_step(

// AUTODIFF:     func.func @forward(
// AUTODIFF:     func.func @loss(
// AUTODIFF:     func.func @train_step(
// AUTODIFF-NOT: cairn.program

// LOWER-NOT:     func.func
// LOWER:         cairn.program "Tiny" attributes {batch = 4 : i64, optimizer = "SGD(lr=0.1, momentum=0.9, dampening=0, weight_decay=0, nesterov=False)", source = "tiny.cairn", target = "cpu"} {
// LOWER:           cairn.step train_step {
// LOWER-NOT:       in_place
// LOWER:           cairn.step forward {
// LOWER-NOT:       in_place
// LOWER-NOT:     func.func

// The memory-aware order moves the updates up to their gradients (see
// schedule-for-memory.mlir); nothing is in place or placed yet.
// SCHEDULE:      cairn.program "Tiny" attributes {batch = 4 : i64,
// SCHEDULE-NOT:  in_place
// SCHEDULE:      cairn.step train_step attributes {moved_kernels = 7 : i64, peak_after = 1024 : i64, peak_before = 1536 : i64} {
// SCHEDULE-NOT:  in_place
// SCHEDULE:      cairn.step forward attributes {moved_kernels = 0 : i64, peak_after = 512 : i64, peak_before = 512 : i64} {
// SCHEDULE-NOT:  in_place

// INPLACE:       cairn.program "Tiny" attributes {batch = 4 : i64,
// INPLACE-NOT:   " at
// INPLACE:       %tanh = cairn.buffer saved "tanh" in_place(%fc1.linear : memref<4x16xf32>) : memref<4x16xf32>
// INPLACE-NOT:   " at
// INPLACE:       %tanh_grad = cairn.buffer temp "tanh_grad" in_place(%fc2.linear_grad_input : memref<4x16xf32>) : memref<4x16xf32>
// INPLACE-NOT:   " at
// INPLACE:       %tanh.1 = cairn.buffer activation "tanh.1" in_place(%fc1.linear.1 : memref<4x16xf32>) : memref<4x16xf32>
// INPLACE-NOT:   " at

// The plan: the per-step buffers need 1024 bytes at most (the lower bound,
// so greedy is optimal), the persistent buffers sit on top of them in
// declaration order, each rounded up to 256: 3584 bytes from 1024, arena
// 4608. In-place pairs share their offsets, and the forward pass reuses
// the training step's bytes.
// PLAN:          cairn.program "Tiny" attributes {arena_bytes = 4608 : i64, batch = 4 : i64, optimizer = "SGD(lr=0.1, momentum=0.9, dampening=0, weight_decay=0, nesterov=False)", plan_method = "greedy-by-size", plan_optimal, source = "tiny.cairn", target = "cpu"} {
// PLAN-NEXT:       %fc1.weight = cairn.buffer param "fc1.weight" at 1024 {init = #cairn.init<uniform, 0.35355339059327373>} : memref<16x8xf32>
// PLAN-NEXT:       %fc1.bias = cairn.buffer param "fc1.bias" at 1536 {init = #cairn.init<uniform, 0.35355339059327373>} : memref<16xf32>
// PLAN-NEXT:       %fc2.weight = cairn.buffer param "fc2.weight" at 1792 {init = #cairn.init<uniform, 0.25>} : memref<3x16xf32>
// PLAN-NEXT:       %fc2.bias = cairn.buffer param "fc2.bias" at 2048 {init = #cairn.init<uniform, 0.25>} : memref<3xf32>
// PLAN-NEXT:       %fc1.weight.momentum_buffer = cairn.buffer optimizer "fc1.weight.momentum_buffer" at 2304 {init = #cairn.init<zeros, 0.0>} : memref<16x8xf32>
// PLAN-NEXT:       %fc1.bias.momentum_buffer = cairn.buffer optimizer "fc1.bias.momentum_buffer" at 2816 {init = #cairn.init<zeros, 0.0>} : memref<16xf32>
// PLAN-NEXT:       %fc2.weight.momentum_buffer = cairn.buffer optimizer "fc2.weight.momentum_buffer" at 3072 {init = #cairn.init<zeros, 0.0>} : memref<3x16xf32>
// PLAN-NEXT:       %fc2.bias.momentum_buffer = cairn.buffer optimizer "fc2.bias.momentum_buffer" at 3328 {init = #cairn.init<zeros, 0.0>} : memref<3xf32>
// PLAN-NEXT:       %x = cairn.buffer input "x" at 3584 : memref<4x2x4xf32>
// PLAN-NEXT:       %y = cairn.buffer input "y" at 3840 : memref<4xi64>
// PLAN-NEXT:       %loss = cairn.buffer output "loss" at 4096 : memref<f32>
// PLAN-NEXT:       %output = cairn.buffer output "output" at 4352 : memref<4x3xf32>
// PLAN-NEXT:       cairn.step train_step attributes {moved_kernels = 7 : i64, peak_after = 1024 : i64, peak_before = 1536 : i64} {
// PLAN:              %fc1.linear = cairn.buffer activation "fc1.linear" at 0 : memref<4x16xf32>
// PLAN:              %tanh = cairn.buffer saved "tanh" at 0 in_place(%fc1.linear : memref<4x16xf32>) : memref<4x16xf32>
// PLAN:              %fc2.linear_grad_input = cairn.buffer temp "fc2.linear_grad_input" at 512 : memref<4x16xf32>
// PLAN:              %tanh_grad = cairn.buffer temp "tanh_grad" at 512 in_place(%fc2.linear_grad_input : memref<4x16xf32>) : memref<4x16xf32>
// PLAN:            cairn.step forward attributes {moved_kernels = 0 : i64, peak_after = 512 : i64, peak_before = 512 : i64} {
// PLAN:              %fc1.linear.1 = cairn.buffer activation "fc1.linear.1" at 0 : memref<4x16xf32>
// PLAN:              %tanh.1 = cairn.buffer activation "tanh.1" at 0 in_place(%fc1.linear.1 : memref<4x16xf32>) : memref<4x16xf32>

// Without reuse: the lowered order (no schedule attributes), nothing in
// place, every buffer its own bytes: 3584 persistent + 3072 for the
// training step's eleven buffers (ten of 256, grad.fc1.weight 512) + 512
// for the forward pass's two = 7168.
// NOREUSE:       cairn.program "Tiny" attributes {arena_bytes = 7168 : i64, {{.*}}plan_method = "no-reuse", source
// NOREUSE-NOT:   in_place
// NOREUSE:       cairn.step train_step {
// NOREUSE-NOT:   in_place
// NOREUSE:       cairn.step forward {
// NOREUSE-NOT:   in_place

// Without reordering: no schedule attributes, in place all the same.
// NOREORDER:     cairn.program "Tiny" attributes {arena_bytes = {{[0-9]+}} : i64,
// NOREORDER:       cairn.step train_step {
// NOREORDER:         %tanh = cairn.buffer saved "tanh" at 0 in_place(%fc1.linear
// NOREORDER:       cairn.step forward {

// The forward pass alone (cairn-extract-step right after the lowering): no
// optimizer state, no labels, no loss. Params 512 + 3 * 256, x 256 and
// output 256 (1792 bytes), and fc1.linear.1 with tanh.1 in place over it,
// live throughout the three kernels, stacked after them: arena 2048.
// FORWARD:       cairn.program "Tiny" attributes {arena_bytes = 2048 : i64,
// FORWARD-NOT:   momentum_buffer
// FORWARD-NOT:   "y"
// FORWARD-NOT:   "loss"
// FORWARD-NOT:   cairn.step train_step
// FORWARD:       cairn.step forward
// FORWARD:         %tanh.1 = cairn.buffer activation "tanh.1" at 1792 in_place(%fc1.linear.1

// On CUDA, fc2's GEMM (k = 16 inputs against 4 rows by 3 outputs) gets a
// workspace in each step (see lower-to-kernels.mlir), planned with the rest.
// CUDA:          cairn.program "Tiny" attributes {arena_bytes = {{[0-9]+}} : i64, {{.*}}target = "cuda"} {
// CUDA:            %fc2.workspace = cairn.buffer workspace "fc2.workspace" at {{[0-9]+}} : memref<64xf32>
// CUDA:            %fc2.workspace.1 = cairn.buffer workspace "fc2.workspace.1" at {{[0-9]+}} : memref<64xf32>

// Bad options are fatal errors that name the option and what it takes.
// The fuse stage, on a model with relus (this file's tanh fuses with
// nothing): each step's relu folds into its linear; fuse=false keeps it.
// FUSE-LABEL: cairn.step train_step
// FUSE: cairn.kernel.linear {{.*}}relu = true
// FUSE-LABEL: cairn.step forward
// FUSE: cairn.kernel.linear {{.*}}relu = true
// NOFUSE-NOT: relu = true
// NOFUSE: cairn.kernel.relu
// NOFUSE-NOT: relu = true

// BAD-STAGE:  cairn-training-pipeline: unknown stage 'emit'; expected one of elaborate, autodiff, lower, recompute, partition, fuse, schedule, in-place, plan, verify
// BAD-TARGET: cairn-training-pipeline: unknown target 'tpu'; expected cpu or cuda
// BAD-STEP:   cairn-training-pipeline: unknown step 'both_steps'; expected both, train_step or forward
