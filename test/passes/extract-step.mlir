// RUN: cairn-opt %s --cairn-extract-step | FileCheck %s --check-prefix=FORWARD
// RUN: cairn-opt %s --cairn-extract-step=step=forward | FileCheck %s --check-prefix=FORWARD
// RUN: cairn-opt %s --cairn-extract-step=step=train_step | FileCheck %s --check-prefix=TRAIN
// RUN: cairn build %S/Inputs/tiny-mlp.cairn --emit=mlir --stop-after=lower | cairn-opt --cairn-extract-step=step=forward | FileCheck %s --check-prefix=TINY-FORWARD
// RUN: cairn build %S/Inputs/tiny-mlp.cairn --emit=mlir --stop-after=lower | cairn-opt --cairn-extract-step=step=train_step | FileCheck %s --check-prefix=TINY-TRAIN

// Tests that one step is kept (forward by default) with the persistent
// buffers it uses, a buffer it reads only through a view included; the
// other step goes, with the persistent buffers only it used ("labels" only
// through a view, "loss"), and a param no step uses ("unused") goes either
// way.
cairn.program "Extract" attributes {batch = 2 : i64, optimizer = "", source = "extract.cairn", target = "cpu"} {
  %w = cairn.buffer param "w" {init = #cairn.init<ones, 0.0>} : memref<2x2xf32>
  %unused = cairn.buffer param "unused" {init = #cairn.init<zeros, 0.0>} : memref<8xf32>
  %labels = cairn.buffer input "labels" : memref<2x2xf32>
  %x = cairn.buffer input "x" : memref<4xf32>
  %loss = cairn.buffer output "loss" : memref<f32>
  %out = cairn.buffer output "output" : memref<2x2xf32>
  cairn.step train_step {
    %flat = cairn.view activation "labels.flat" %labels : memref<2x2xf32> to memref<4xf32>
    %d = cairn.buffer temp "d" : memref<4xf32>
    cairn.kernel.sub ins(%x, %flat : memref<4xf32>, memref<4xf32>) outs(%d : memref<4xf32>) {lhs_strides = array<i64: 1>, n = 4 : i64, rhs_strides = array<i64: 1>}
    cairn.kernel.reduce_sum ins(%d : memref<4xf32>) outs(%loss : memref<f32>) {alpha = 1.0 : f64, reduced = array<i1: true>}
  }
  cairn.step forward {
    %xv = cairn.view activation "x.view" %x : memref<4xf32> to memref<2x2xf32>
    cairn.kernel.mul ins(%xv, %w : memref<2x2xf32>, memref<2x2xf32>) outs(%out : memref<2x2xf32>) {lhs_strides = array<i64: 2, 1>, n = 4 : i64, rhs_strides = array<i64: 2, 1>}
  }
}

// FORWARD-LABEL: cairn.program "Extract"
// FORWARD-NEXT:    %w = cairn.buffer param "w" {init = #cairn.init<ones, 0.0>} : memref<2x2xf32>
// FORWARD-NEXT:    %x = cairn.buffer input "x" : memref<4xf32>
// FORWARD-NEXT:    %output = cairn.buffer output "output" : memref<2x2xf32>
// FORWARD-NEXT:    cairn.step forward {
// FORWARD-NEXT:      %x.view = cairn.view activation "x.view" %x
// FORWARD-NEXT:      cairn.kernel.mul ins(%x.view, %w : memref<2x2xf32>, memref<2x2xf32>) outs(%output : memref<2x2xf32>)
// FORWARD-NEXT:    {{^ *}}}{{$}}
// FORWARD-NEXT:  {{^ *}}}{{$}}

// TRAIN-LABEL: cairn.program "Extract"
// TRAIN-NEXT:    %labels = cairn.buffer input "labels" : memref<2x2xf32>
// TRAIN-NEXT:    %x = cairn.buffer input "x" : memref<4xf32>
// TRAIN-NEXT:    %loss = cairn.buffer output "loss" : memref<f32>
// TRAIN-NEXT:    cairn.step train_step {
// TRAIN-NEXT:      %labels.flat = cairn.view activation "labels.flat" %labels
// TRAIN-NEXT:      %d = cairn.buffer temp "d" : memref<4xf32>
// TRAIN-NEXT:      cairn.kernel.sub ins(%x, %labels.flat
// TRAIN-NEXT:      cairn.kernel.reduce_sum ins(%d : memref<4xf32>) outs(%loss : memref<f32>)
// TRAIN-NEXT:    {{^ *}}}{{$}}
// TRAIN-NEXT:  {{^ *}}}{{$}}

// The two-layer perceptron for inference alone: no optimizer state, no
// labels, no loss.
// TINY-FORWARD-LABEL: cairn.program "Tiny"
// TINY-FORWARD-NEXT:    %fc1.weight = cairn.buffer param "fc1.weight"
// TINY-FORWARD-NEXT:    %fc1.bias = cairn.buffer param "fc1.bias"
// TINY-FORWARD-NEXT:    %fc2.weight = cairn.buffer param "fc2.weight"
// TINY-FORWARD-NEXT:    %fc2.bias = cairn.buffer param "fc2.bias"
// TINY-FORWARD-NEXT:    %x = cairn.buffer input "x"
// TINY-FORWARD-NEXT:    %output = cairn.buffer output "output"
// TINY-FORWARD-NEXT:    cairn.step forward {
// TINY-FORWARD-NOT:     cairn.step
// TINY-FORWARD-NOT:     momentum_buffer

// For training alone: everything but the forward pass's output.
// TINY-TRAIN-LABEL: cairn.program "Tiny"
// TINY-TRAIN-NEXT:    %fc1.weight = cairn.buffer param "fc1.weight"
// TINY-TRAIN-NEXT:    %fc1.bias = cairn.buffer param "fc1.bias"
// TINY-TRAIN-NEXT:    %fc2.weight = cairn.buffer param "fc2.weight"
// TINY-TRAIN-NEXT:    %fc2.bias = cairn.buffer param "fc2.bias"
// TINY-TRAIN-NEXT:    %fc1.weight.momentum_buffer = cairn.buffer optimizer "fc1.weight.momentum_buffer"
// TINY-TRAIN-NEXT:    %fc1.bias.momentum_buffer = cairn.buffer optimizer "fc1.bias.momentum_buffer"
// TINY-TRAIN-NEXT:    %fc2.weight.momentum_buffer = cairn.buffer optimizer "fc2.weight.momentum_buffer"
// TINY-TRAIN-NEXT:    %fc2.bias.momentum_buffer = cairn.buffer optimizer "fc2.bias.momentum_buffer"
// TINY-TRAIN-NEXT:    %x = cairn.buffer input "x"
// TINY-TRAIN-NEXT:    %y = cairn.buffer input "y"
// TINY-TRAIN-NEXT:    %loss = cairn.buffer output "loss"
// TINY-TRAIN-NEXT:    cairn.step train_step {
// TINY-TRAIN-NOT:     cairn.step
// TINY-TRAIN-NOT:     "output"
