// RUN: cairn-opt %s -verify-diagnostics --cairn-autocast="precision=bf16 loss-scaling=true"

// Tests that loss-scaling (cairn build|plan --loss-scaling) asks for a step
// to scale: a model without @loss and an optimizer is an error, not a
// module left without the scaler it asked for.
// expected-error @+1 {{--loss-scaling: model has no training step to scale (it needs a loss and an optimizer)}}
module {
  func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
}
