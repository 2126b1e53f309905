// RUN: cairn-opt %s --cairn-print-model-summary -o /dev/null | FileCheck %s
// RUN: cairn-opt %s --cairn-print-model-summary=json -o /dev/null | FileCheck %s --check-prefix=JSON

// Tests that the summary lists inputs, one row per op of @forward with its
// layer (from the NameLoc), shape, parameter count and FLOPs, and totals that
// count parameters and buffers apart.

// CHECK: model Tiny, batch 4
// CHECK-NEXT: inputs: x f32[4, 8] y i64[4]
// CHECK: layer  op
// CHECK-NEXT: fc linear [4, 2] 18 136 m.cairn:3:5
// CHECK-NEXT: - relu [4, 2] 8 m.cairn:4:5
// CHECK: parameters: 18 in 2 tensors; buffers: 3 elements in 1 tensors
// CHECK-NEXT: forward FLOPs: 144 (batch 4)
// CHECK-NEXT: training: loss and #cairn.sgd<lr = 0.1

// JSON: "batch": 4,
// JSON: "buffers": 3,
// JSON: "forward_flops": 144,
// JSON: "parameters": 18,
// JSON: "state_dict": [
// JSON: "kind": "param",
// JSON-NEXT: "name": "fc.weight",
// JSON-NEXT: "shape": [
// JSON-NEXT: 2,
// JSON-NEXT: 8
// JSON: "kind": "buffer",
// JSON-NEXT: "name": "stats",
module attributes {cairn.model = "Tiny", cairn.batch = 4 : i64,
    cairn.optimizer = #cairn.sgd<lr = 0.1, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false>} {
  func.func @forward(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                     %w: tensor<2x8xf32> {cairn.name = "fc.weight", cairn.role = #cairn.role<param>},
                     %b: tensor<2xf32> {cairn.name = "fc.bias", cairn.role = #cairn.role<param>},
                     %s: tensor<3xf32> {cairn.name = "stats", cairn.role = #cairn.role<buffer>}) -> tensor<4x2xf32> {
    %0 = cairn.linear %x, %w, %b : (tensor<4x8xf32>, tensor<2x8xf32>, tensor<2xf32>) -> tensor<4x2xf32> loc("fc"("m.cairn":3:5))
    %1 = cairn.relu %0 : tensor<4x2xf32> loc("m.cairn":4:5)
    return %1 : tensor<4x2xf32>
  }
  func.func @loss(%x: tensor<4x8xf32> {cairn.name = "x", cairn.role = #cairn.role<input>},
                  %y: tensor<4xi64> {cairn.name = "y", cairn.role = #cairn.role<input>}) -> tensor<f32> {
    %c = cairn.constant dense<0.0> : tensor<f32>
    return %c : tensor<f32>
  }
}
