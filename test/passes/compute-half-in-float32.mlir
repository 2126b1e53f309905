// RUN: cairn-opt %s --cairn-compute-half-in-float32 | FileCheck %s
// RUN: cairn-opt %s --cairn-compute-half-in-float32 --cairn-lower-to-kernels | FileCheck %s --check-prefix=KERNELS

// Tests that an op on half tensors reads float32 copies made right before it
// (one per reader: the relu's and the add's of %h are two, so no float32
// copy outlives its reader), writes float32 and stores its result in half;
// that readers take the rounded half value; that a half constant is made
// again in float32 and cast; that casts and reshapes stay on half tensors and
// float32 ops are left alone. After lowering: cast kernels, and the step's
// kept values in half.
module attributes {cairn.batch = 2 : i64, cairn.model = "H"} {
  func.func @forward(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> tensor<8xf32> {
    %h = cairn.cast %x : tensor<2x4xf32> -> tensor<2x4xbf16>
    %r = cairn.relu %h : tensor<2x4xbf16>
    %c = cairn.constant dense<2.500000e-01> : tensor<bf16>
    %m = cairn.mul %r, %c : tensor<2x4xbf16>, tensor<bf16> -> tensor<2x4xbf16>
    %s = cairn.add %m, %h : tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<2x4xbf16>
    %f = cairn.reshape %s : tensor<2x4xbf16> -> tensor<8xbf16>
    %o = cairn.cast %f : tensor<8xbf16> -> tensor<8xf32>
    %t = cairn.tanh %o : tensor<8xf32>
    return %t : tensor<8xf32>
  }
  func.func @train_step(%x: tensor<2x4xf32> {cairn.name = "x", cairn.role = #cairn.role<input>}) -> (tensor<f32> {cairn.name = "loss", cairn.role = #cairn.role<output>}) {
    %0 = cairn.constant dense<1.000000e+00> : tensor<f32>
    return %0 : tensor<f32>
  }
}
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT: %[[H:.*]] = cairn.cast %{{.*}} : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[H1:.*]] = cairn.cast %[[H]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK-NEXT: %[[R32:.*]] = cairn.relu %[[H1]] : tensor<2x4xf32>
// CHECK-NEXT: %[[R:.*]] = cairn.cast %[[R32]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[C32:.*]] = cairn.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[C:.*]] = cairn.cast %[[C32]] : tensor<f32> -> tensor<bf16>
// CHECK-NEXT: %[[RA:.*]] = cairn.cast %[[R]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK-NEXT: %[[CA:.*]] = cairn.cast %[[C]] : tensor<bf16> -> tensor<f32>
// CHECK-NEXT: %[[M32:.*]] = cairn.mul %[[RA]], %[[CA]] : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[M:.*]] = cairn.cast %[[M32]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[MA:.*]] = cairn.cast %[[M]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK-NEXT: %[[H2:.*]] = cairn.cast %[[H]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK-NEXT: %[[S32:.*]] = cairn.add %[[MA]], %[[H2]] : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[S:.*]] = cairn.cast %[[S32]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[F:.*]] = cairn.reshape %[[S]] : tensor<2x4xbf16> -> tensor<8xbf16>
// CHECK-NEXT: %[[O:.*]] = cairn.cast %[[F]] : tensor<8xbf16> -> tensor<8xf32>
// CHECK-NEXT: cairn.tanh %[[O]] : tensor<8xf32>

// KERNELS: cairn.step forward
// KERNELS: cairn.kernel.cast ins(%x : memref<2x4xf32>) outs(%{{.*}} : memref<2x4xbf16>) {n = 8 : i64}
// KERNELS: cairn.kernel.relu ins(%{{.*}} : memref<2x4xf32>)
// KERNELS: cairn.view activation "reshape" %{{.*}} : memref<2x4xbf16> to memref<8xbf16>
