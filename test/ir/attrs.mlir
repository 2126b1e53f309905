// RUN: cairn-opt %s -split-input-file | cairn-opt -split-input-file | FileCheck %s
// RUN: cairn-opt %s -split-input-file --mlir-print-op-generic | cairn-opt -split-input-file | FileCheck %s

// Round trip of every cairn attribute and of the discardable cairn.*
// attributes on the module, on function arguments and results, and on ops.

// Tests that the module attributes round-trip, with an SGD optimizer.
// CHECK: module attributes {cairn.batch = 64 : i64, cairn.model = "mlp", cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 0.0005, nesterov = false>}
module attributes {cairn.model = "mlp", cairn.batch = 64 : i64, cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.9, dampening = 0.0, weight_decay = 5.0e-4, nesterov = false>} {
}

// -----

// Tests that the SGD parameters parse in any order and nesterov = true.
// CHECK: cairn.optimizer = #cairn.sgd<lr = 0.01, momentum = 0.9, dampening = 0.0, weight_decay = 0.0, nesterov = true>
module attributes {cairn.optimizer = #cairn.sgd<nesterov = true, lr = 0.01, weight_decay = 0.0, dampening = 0.0, momentum = 0.9>} {
}

// -----

// Tests that an Adam optimizer round-trips.
// CHECK: module attributes {cairn.optimizer = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.0>}
module attributes {cairn.optimizer = #cairn.adam<lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>} {
}

// -----

// Tests that AdamW (Adam with decoupled weight decay) round-trips, the flag
// printed because it is not the default.
// CHECK: module attributes {cairn.optimizer = #cairn.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08, weight_decay = 0.01, decoupled_weight_decay = true>}
module attributes {cairn.optimizer = #cairn.adam<lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01, decoupled_weight_decay = true>} {
}

// -----

// Tests that the argument and result attributes round-trip: every role and
// every initializer kind.
// CHECK-LABEL: func.func @arguments
// CHECK-SAME: %{{.+}}: tensor<64x784xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}
// CHECK-SAME: %{{.+}}: tensor<10x784xf32> {cairn.init = #cairn.init<uniform, 0.0357>, cairn.name = "fc.weight", cairn.role = #cairn.role<param>}
// CHECK-SAME: %{{.+}}: tensor<10xf32> {cairn.init = #cairn.init<zeros, 0.0>, cairn.name = "fc.bias", cairn.role = #cairn.role<param>}
// CHECK-SAME: %{{.+}}: tensor<10xf32> {cairn.init = #cairn.init<ones, 0.0>, cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>}
// CHECK-SAME: %{{.+}}: tensor<10x10xf32> {cairn.init = #cairn.init<normal, 0.02>, cairn.name = "proj.weight", cairn.role = #cairn.role<param>}
// CHECK-SAME: -> (tensor<64x784xf32> {cairn.name = "out"})
func.func @arguments(
    %x: tensor<64x784xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
    %w: tensor<10x784xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>, cairn.init = #cairn.init<uniform, 0.0357>},
    %b: tensor<10xf32> {cairn.name = "fc.bias", cairn.role = #cairn.role<param>, cairn.init = #cairn.init<zeros, 0.0>},
    %v: tensor<10xf32> {cairn.name = "bn.running_var", cairn.role = #cairn.role<buffer>, cairn.init = #cairn.init<ones, 0.0>},
    %p: tensor<10x10xf32> {cairn.name = "proj.weight", cairn.role = #cairn.role<param>, cairn.init = #cairn.init<normal, 0.02>})
    -> (tensor<64x784xf32> {cairn.name = "out"}) {
  return %x : tensor<64x784xf32>
}

// -----

// Tests that the op attributes round-trip: every precision, devices and
// checkpoint ids.
// CHECK-LABEL: func.func @ops
func.func @ops(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK: cairn.relu %{{.+}} {cairn.checkpoint = 0 : i64, cairn.device = 1 : i64, cairn.precision = #cairn.precision<f16>}
  %0 = cairn.relu %x {cairn.checkpoint = 0, cairn.device = 1, cairn.precision = #cairn.precision<f16>} : tensor<4x4xf32>
  // CHECK: cairn.relu %{{.+}} {cairn.precision = #cairn.precision<bf16>}
  %1 = cairn.relu %0 {cairn.precision = #cairn.precision<bf16>} : tensor<4x4xf32>
  // CHECK: cairn.relu %{{.+}} {cairn.checkpoint = 3 : i64, cairn.precision = #cairn.precision<f32>}
  %2 = cairn.relu %1 {cairn.checkpoint = 3 : i64, cairn.precision = #cairn.precision<f32>} : tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// Tests that attribute values also round-trip outside their usual places
// (as plain attributes of a non-cairn name).
// CHECK: module attributes {test.init = #cairn.init<normal, 1.0>, test.role = #cairn.role<buffer>}
module attributes {test.init = #cairn.init<normal, 1.0>, test.role = #cairn.role<buffer>} {
}

// -----

// Tests that doubles print in their shortest exact form: 17 digits where
// needed, an exponent with a '.' for tiny and huge values.
// CHECK: module attributes {test.a = #cairn.init<uniform, 0.30000000000000004>, test.b = #cairn.init<normal, 1.0e-300>, test.c = #cairn.init<normal, 1.5e+20>, test.d = #cairn.init<normal, 3.0>}
module attributes {test.a = #cairn.init<uniform, 0.30000000000000004>, test.b = #cairn.init<normal, 1.0e-300>, test.c = #cairn.init<normal, 150000000000000000000.0>, test.d = #cairn.init<normal, 3.000>} {
}

// -----

// Tests that an initializer with a zeroed row (Embedding's padding_idx)
// round-trips, and that the row is printed only when there is one.
// CHECK-LABEL: func.func @zero_row
// CHECK-SAME: cairn.init = #cairn.init<normal, 1.0, zero_row = 2>
// CHECK-SAME: cairn.init = #cairn.init<normal, 1.0>
func.func @zero_row(%e: tensor<10x4xf32> {cairn.init = #cairn.init<normal, 1.0, zero_row = 2>},
                    %f: tensor<10x4xf32> {cairn.init = #cairn.init<normal, 1.0, zero_row = -1>}) {
  return
}
