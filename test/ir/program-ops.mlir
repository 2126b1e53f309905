// RUN: cairn-opt %s | cairn-opt | FileCheck %s
// RUN: cairn-opt %s --mlir-print-op-generic | cairn-opt | FileCheck %s
// RUN: cairn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// The buffer-level form round-trips through its custom and its generic
// syntax: a planned program with a persistent buffer of every persistent
// kind (with the initializers of those that take one), both steps, views
// (a view of a view of a view in the forward pass), an in-place buffer, an
// absent optional operand (`_`), a variadic kernel (concat), a kernel with
// a workspace, and the in-place updates (adam_update, sgd_update without
// momentum, batch_norm_running_update). The SSA names of the input are not
// the buffers' names: the printer names every buffer and view after its
// `name`.

// Tests that a planned program prints back as written.
cairn.program "Toy" attributes {arena_bytes = 8192 : i64, batch = 4 : i64, optimizer = "Adam(lr=0.001)", plan_method = "exact-search", plan_optimal, source = "toy.cairn", target = "cuda"} {
  %0 = cairn.buffer input "x" at 0 : memref<4x2x4xf32>
  %w = cairn.buffer param "fc.weight" at 256 {init = #cairn.init<uniform, 0.35355339059327373>} : memref<16x8xf32>
  %b = cairn.buffer param "fc.bias" at 768 {init = #cairn.init<normal, 0.02>} : memref<16xf32>
  %mean = cairn.buffer buffer "bn.running_mean" at 1024 {init = #cairn.init<zeros, 0.0>} : memref<4xf32>
  %var = cairn.buffer buffer "bn.running_var" at 1280 {init = #cairn.init<ones, 0.0>} : memref<4xf32>
  %count = cairn.buffer buffer "bn.num_batches_tracked" at 1536 {init = #cairn.init<zeros, 0.0>} : memref<i64>
  %m = cairn.buffer optimizer "fc.weight.exp_avg" at 1792 {init = #cairn.init<zeros, 0.0>} : memref<16x8xf32>
  %v = cairn.buffer optimizer "fc.weight.exp_avg_sq" at 2304 {init = #cairn.init<zeros, 0.0>} : memref<16x8xf32>
  %loss = cairn.buffer output "loss" at 2816 : memref<f32>
  %out = cairn.buffer output "output" at 3072 : memref<4x16xf32>
  cairn.step train_step attributes {moved_kernels = 1 : i64, peak_after = 1280 : i64, peak_before = 1536 : i64} {
    %flat = cairn.view activation "reshape" %0 : memref<4x2x4xf32> to memref<4x8xf32>
    %ws = cairn.buffer workspace "fc.workspace" at 3584 : memref<64xf32>
    %y = cairn.buffer activation "fc.linear" at 3840 : memref<4x16xf32>
    cairn.kernel.linear ins(%flat, %w, _ : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) workspace(%ws : memref<64xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
    %r = cairn.buffer saved "relu" at 3840 in_place(%y : memref<4x16xf32>) : memref<4x16xf32>
    cairn.kernel.relu ins(%y : memref<4x16xf32>) outs(%r : memref<4x16xf32>) {n = 64 : i64}
    %nchw = cairn.view saved "bn.input" %r : memref<4x16xf32> to memref<4x4x2x2xf32>
    cairn.kernel.batch_norm_running_update ins(%nchw, %mean, %var, %count : memref<4x4x2x2xf32>, memref<4xf32>, memref<4xf32>, memref<i64>) outs(%mean, %var, %count : memref<4xf32>, memref<4xf32>, memref<i64>) {c = 4 : i64, momentum = 1.000000e-01 : f64, n = 4 : i64, spatial = 4 : i64}
    %cat = cairn.buffer temp "cat" at 4096 : memref<4x24xf32>
    cairn.kernel.concat ins(%r, %flat : memref<4x16xf32>, memref<4x8xf32>) outs(%cat : memref<4x24xf32>) {dim = 1 : i64, starts = array<i64: 0, 16>}
    cairn.kernel.reduce_sum ins(%cat : memref<4x24xf32>) outs(%loss : memref<f32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, true>}
    %g = cairn.buffer grad "grad.fc.weight" at 4864 : memref<16x8xf32>
    cairn.kernel.linear_grad_weight ins(%r, %flat : memref<4x16xf32>, memref<4x8xf32>) outs(%g : memref<16x8xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
    cairn.kernel.adam_update ins(%w, %g, %m, %v, _ : memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>) outs(%w, %m, %v : memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>) {beta1 = 9.000000e-01 : f64, beta2 = 0.999 : f64, eps = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, n = 128 : i64, weight_decay = 0.000000e+00 : f64}
    %gb = cairn.buffer grad "grad.fc.bias" at 4864 : memref<16xf32>
    cairn.kernel.reduce_sum ins(%r : memref<4x16xf32>) outs(%gb : memref<16xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
    cairn.kernel.sgd_update ins(%b, %gb, _, _ : memref<16xf32>, memref<16xf32>) outs(%b, _ : memref<16xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 16 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
  }
  cairn.step forward {
    %1 = cairn.view activation "reshape.1" %0 : memref<4x2x4xf32> to memref<4x8xf32>
    %2 = cairn.view activation "reshape.2" %1 : memref<4x8xf32> to memref<32xf32>
    %3 = cairn.view activation "reshape.3" %2 : memref<32xf32> to memref<4x8xf32>
    cairn.kernel.linear ins(%3, %w, %b : memref<4x8xf32>, memref<16x8xf32>, memref<16xf32>) outs(%out : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
  }
}

// CHECK-LABEL: cairn.program "Toy" attributes {arena_bytes = 8192 : i64, batch = 4 : i64, optimizer = "Adam(lr=0.001)", plan_method = "exact-search", plan_optimal, source = "toy.cairn", target = "cuda"} {
// CHECK-NEXT:    %x = cairn.buffer input "x" at 0 : memref<4x2x4xf32>
// CHECK-NEXT:    %fc.weight = cairn.buffer param "fc.weight" at 256 {init = #cairn.init<uniform, 0.35355339059327373>} : memref<16x8xf32>
// CHECK-NEXT:    %fc.bias = cairn.buffer param "fc.bias" at 768 {init = #cairn.init<normal, 0.02>} : memref<16xf32>
// CHECK-NEXT:    %bn.running_mean = cairn.buffer buffer "bn.running_mean" at 1024 {init = #cairn.init<zeros, 0.0>} : memref<4xf32>
// CHECK-NEXT:    %bn.running_var = cairn.buffer buffer "bn.running_var" at 1280 {init = #cairn.init<ones, 0.0>} : memref<4xf32>
// CHECK-NEXT:    %bn.num_batches_tracked = cairn.buffer buffer "bn.num_batches_tracked" at 1536 {init = #cairn.init<zeros, 0.0>} : memref<i64>
// CHECK-NEXT:    %fc.weight.exp_avg = cairn.buffer optimizer "fc.weight.exp_avg" at 1792 {init = #cairn.init<zeros, 0.0>} : memref<16x8xf32>
// CHECK-NEXT:    %fc.weight.exp_avg_sq = cairn.buffer optimizer "fc.weight.exp_avg_sq" at 2304 {init = #cairn.init<zeros, 0.0>} : memref<16x8xf32>
// CHECK-NEXT:    %loss = cairn.buffer output "loss" at 2816 : memref<f32>
// CHECK-NEXT:    %output = cairn.buffer output "output" at 3072 : memref<4x16xf32>

// CHECK-NEXT:    cairn.step train_step attributes {moved_kernels = 1 : i64, peak_after = 1280 : i64, peak_before = 1536 : i64} {
// CHECK-NEXT:      %reshape = cairn.view activation "reshape" %x : memref<4x2x4xf32> to memref<4x8xf32>
// CHECK-NEXT:      %fc.workspace = cairn.buffer workspace "fc.workspace" at 3584 : memref<64xf32>
// CHECK-NEXT:      %fc.linear = cairn.buffer activation "fc.linear" at 3840 : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.linear ins(%reshape, %fc.weight, _ : memref<4x8xf32>, memref<16x8xf32>) outs(%fc.linear : memref<4x16xf32>) workspace(%fc.workspace : memref<64xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
// CHECK-NEXT:      %relu = cairn.buffer saved "relu" at 3840 in_place(%fc.linear : memref<4x16xf32>) : memref<4x16xf32>
// CHECK-NEXT:      cairn.kernel.relu ins(%fc.linear : memref<4x16xf32>) outs(%relu : memref<4x16xf32>) {n = 64 : i64}
// CHECK-NEXT:      %bn.input = cairn.view saved "bn.input" %relu : memref<4x16xf32> to memref<4x4x2x2xf32>
// CHECK-NEXT:      cairn.kernel.batch_norm_running_update ins(%bn.input, %bn.running_mean, %bn.running_var, %bn.num_batches_tracked : memref<4x4x2x2xf32>, memref<4xf32>, memref<4xf32>, memref<i64>) outs(%bn.running_mean, %bn.running_var, %bn.num_batches_tracked : memref<4xf32>, memref<4xf32>, memref<i64>) {c = 4 : i64, momentum = 1.000000e-01 : f64, n = 4 : i64, spatial = 4 : i64}
// CHECK-NEXT:      %cat = cairn.buffer temp "cat" at 4096 : memref<4x24xf32>
// CHECK-NEXT:      cairn.kernel.concat ins(%relu, %reshape : memref<4x16xf32>, memref<4x8xf32>) outs(%cat : memref<4x24xf32>) {dim = 1 : i64, starts = array<i64: 0, 16>}
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%cat : memref<4x24xf32>) outs(%loss : memref<f32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, true>}
// CHECK-NEXT:      %grad.fc.weight = cairn.buffer grad "grad.fc.weight" at 4864 : memref<16x8xf32>
// CHECK-NEXT:      cairn.kernel.linear_grad_weight ins(%relu, %reshape : memref<4x16xf32>, memref<4x8xf32>) outs(%grad.fc.weight : memref<16x8xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
// CHECK-NEXT:      cairn.kernel.adam_update ins(%fc.weight, %grad.fc.weight, %fc.weight.exp_avg, %fc.weight.exp_avg_sq, _ : memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>) outs(%fc.weight, %fc.weight.exp_avg, %fc.weight.exp_avg_sq : memref<16x8xf32>, memref<16x8xf32>, memref<16x8xf32>) {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, n = 128 : i64, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:      %grad.fc.bias = cairn.buffer grad "grad.fc.bias" at 4864 : memref<16xf32>
// CHECK-NEXT:      cairn.kernel.reduce_sum ins(%relu : memref<4x16xf32>) outs(%grad.fc.bias : memref<16xf32>) {alpha = 1.000000e+00 : f64, reduced = array<i1: true, false>}
// CHECK-NEXT:      cairn.kernel.sgd_update ins(%fc.bias, %grad.fc.bias, _, _ : memref<16xf32>, memref<16xf32>) outs(%fc.bias, _ : memref<16xf32>) {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 0.000000e+00 : f64, n = 16 : i64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK-NEXT:    }

// CHECK-NEXT:    cairn.step forward {
// CHECK-NEXT:      %reshape.1 = cairn.view activation "reshape.1" %x : memref<4x2x4xf32> to memref<4x8xf32>
// CHECK-NEXT:      %reshape.2 = cairn.view activation "reshape.2" %reshape.1 : memref<4x8xf32> to memref<32xf32>
// CHECK-NEXT:      %reshape.3 = cairn.view activation "reshape.3" %reshape.2 : memref<32xf32> to memref<4x8xf32>
// CHECK-NEXT:      cairn.kernel.linear ins(%reshape.3, %fc.weight, %fc.bias : memref<4x8xf32>, memref<16x8xf32>, memref<16xf32>) outs(%output : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// The generic form spells out what the custom one elides: the kinds as
// their enum values, `_` as a zero in operandSegmentSizes (linear: input,
// weight, bias, result, workspace; sgd_update: param, grad,
// momentum_buffer, new_param, new_momentum_buffer), the in-place buffer's
// operand, and a non-segmented kernel's operands inputs first.
// GENERIC-LABEL: "cairn.program"() <{arena_bytes = 8192 : i64, batch = 4 : i64, model = "Toy", optimizer = "Adam(lr=0.001)", plan_method = "exact-search", plan_optimal, source = "toy.cairn", target = "cuda"}>
// GENERIC:       %[[X:.+]] = "cairn.buffer"() <{kind = 0 : i32, name = "x", offset = 0 : i64}> : () -> memref<4x2x4xf32>
// GENERIC:       %[[W:.+]] = "cairn.buffer"() <{init = #cairn.init<uniform, 0.35355339059327373>, kind = 1 : i32, name = "fc.weight", offset = 256 : i64}>
// GENERIC:       %[[B:.+]] = "cairn.buffer"() <{init = #cairn.init<normal, 0.02>, kind = 1 : i32, name = "fc.bias", offset = 768 : i64}>
// GENERIC:       "cairn.buffer"() <{init = #cairn.init<zeros, 0.0>, kind = 2 : i32, name = "bn.running_mean", offset = 1024 : i64}>
// GENERIC:       "cairn.buffer"() <{init = #cairn.init<zeros, 0.0>, kind = 3 : i32, name = "fc.weight.exp_avg", offset = 1792 : i64}>
// GENERIC:       "cairn.buffer"() <{kind = 4 : i32, name = "loss", offset = 2816 : i64}>
// GENERIC:       "cairn.step"() <{kind = 0 : i32, moved_kernels = 1 : i64, peak_after = 1280 : i64, peak_before = 1536 : i64}>
// GENERIC:       %[[FLAT:.+]] = "cairn.view"(%[[X]]) <{kind = 6 : i32, name = "reshape"}> : (memref<4x2x4xf32>) -> memref<4x8xf32>
// GENERIC:       %[[WS:.+]] = "cairn.buffer"() <{kind = 9 : i32, name = "fc.workspace", offset = 3584 : i64}>
// GENERIC:       %[[Y:.+]] = "cairn.buffer"() <{kind = 6 : i32, name = "fc.linear", offset = 3840 : i64}>
// GENERIC:       "cairn.kernel.linear"(%[[FLAT]], %[[W]], %[[Y]], %[[WS]]) <{in = 8 : i64, operandSegmentSizes = array<i32: 1, 1, 0, 1, 1>, out = 16 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}>
// GENERIC:       %[[R:.+]] = "cairn.buffer"(%[[Y]]) <{kind = 7 : i32, name = "relu", offset = 3840 : i64}> : (memref<4x16xf32>) -> memref<4x16xf32>
// GENERIC:       "cairn.kernel.relu"(%[[Y]], %[[R]]) <{n = 64 : i64}>
// GENERIC:       "cairn.kernel.concat"(%[[R]], %[[FLAT]], %{{.+}}) <{dim = 1 : i64, starts = array<i64: 0, 16>}>
// GENERIC:       %[[GB:.+]] = "cairn.buffer"() <{kind = 5 : i32, name = "grad.fc.bias", offset = 4864 : i64}>
// GENERIC:       "cairn.kernel.sgd_update"(%[[B]], %[[GB]], %[[B]]) <{dampening = {{.*}}, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0>
// GENERIC:       "cairn.step"() <{kind = 1 : i32}>
// GENERIC:       "cairn.kernel.linear"(%{{.+}}, %[[W]], %[[B]], %{{.+}}) <{in = 8 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>

// Tests that an unplanned program prints no plan: no offsets, no arena, no
// step attributes.
cairn.program "Bare" attributes {batch = 1 : i64, optimizer = "", source = "bare.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<3xf64>
  %out = cairn.buffer output "output" : memref<3xf64>
  cairn.step train_step {
  }
  cairn.step forward {
    %t = cairn.buffer activation "tanh" : memref<3xf64>
    cairn.kernel.tanh ins(%x : memref<3xf64>) outs(%t : memref<3xf64>) {n = 3 : i64}
    cairn.kernel.copy ins(%t : memref<3xf64>) outs(%out : memref<3xf64>)
  }
}

// CHECK-LABEL: cairn.program "Bare" attributes {batch = 1 : i64, optimizer = "", source = "bare.cairn", target = "cpu"} {
// CHECK-NEXT:    %x = cairn.buffer input "x" : memref<3xf64>
// CHECK-NEXT:    %output = cairn.buffer output "output" : memref<3xf64>
// CHECK-NEXT:    cairn.step train_step {
// CHECK-NEXT:    }
// CHECK-NEXT:    cairn.step forward {
// CHECK-NEXT:      %tanh = cairn.buffer activation "tanh" : memref<3xf64>
// CHECK-NEXT:      cairn.kernel.tanh ins(%x : memref<3xf64>) outs(%tanh : memref<3xf64>) {n = 3 : i64}
// CHECK-NEXT:      cairn.kernel.copy ins(%tanh : memref<3xf64>) outs(%output : memref<3xf64>){{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// -----

// Tests that a replica's bucket reads back: all_reduce_wait's bucket is one
// operand, then its gradients (the variadic group after a single one).
cairn.program "Bucket" attributes {batch = 2 : i64, optimizer = "", source = "bucket.cairn", target = "cpu"} {
  cairn.step train_step {
    %a = cairn.buffer grad "grad.a" : memref<4xf32>
    %b = cairn.buffer grad "grad.b" : memref<2xf32>
    %bucket = cairn.buffer temp "all_reduce.bucket0" : memref<3xf32>
    cairn.kernel.fill outs(%a : memref<4xf32>) {n = 4 : i64, value = 1.0 : f64}
    cairn.kernel.fill outs(%b : memref<2xf32>) {n = 2 : i64, value = 2.0 : f64}
    cairn.kernel.all_reduce_start ins(%a, %b : memref<4xf32>, memref<2xf32>) outs(%bucket : memref<3xf32>) {index = 0 : i64}
    cairn.kernel.all_reduce_wait ins(%bucket, %a, %b : memref<3xf32>, memref<4xf32>, memref<2xf32>) outs(%a, %b : memref<4xf32>, memref<2xf32>) {index = 0 : i64}
  }
  cairn.step forward {
  }
}

// CHECK-LABEL: cairn.program "Bucket"
// CHECK:         cairn.kernel.all_reduce_wait ins(%all_reduce.bucket0, %grad.a, %grad.b : memref<3xf32>, memref<4xf32>, memref<2xf32>) outs(%grad.a, %grad.b : memref<4xf32>, memref<2xf32>) {index = 0 : i64}
// GENERIC-LABEL: model = "Bucket"
// GENERIC:         "cairn.kernel.all_reduce_wait"({{.*}}) <{index = 0 : i64, operandSegmentSizes = array<i32: 1, 2, 2>}>
