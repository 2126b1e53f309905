// RUN: cairn-opt %s -split-input-file -verify-diagnostics

// One negative case for every diagnostic of the program ops
// (ir/CairnProgramOps.cpp: cairn.program, cairn.step, cairn.buffer,
// cairn.view), of the kernels (ir/CairnKernelOps.cpp: the shared printed
// form, verifyKernelOp, the in-place updates' verifiers), and of the ODS
// constraints worth pinning (required attributes, parents, enum keywords).
// Not here: verifyKernelOp's "writes nothing", which no kernel can reach
// (every kind has a required first output, and ODS counts the operands
// before the interface's verifier runs).

//===----------------------------------------------------------------------===//
// cairn.program
//===----------------------------------------------------------------------===//

// Tests that the batch size is at least 1.
// expected-error @+1 {{'cairn.program' op expected a batch size >= 1 but got 0}}
cairn.program "M" attributes {batch = 0 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
}

// -----

// Tests that the target is cpu or cuda.
// expected-error @+1 {{'cairn.program' op expected target "cpu" or "cuda" but got "tpu"}}
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "tpu"} {
}

// -----

// Tests that the arena has a non-negative size.
// expected-error @+1 {{'cairn.program' op expected arena_bytes >= 0 but got -256}}
cairn.program "M" attributes {arena_bytes = -256 : i64, batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
}

// -----

// Tests that the program's required attributes are there (ODS).
// expected-error @+1 {{'cairn.program' op requires attribute 'batch'}}
cairn.program "M" attributes {optimizer = "", source = "m.cairn", target = "cpu"} {
}

// -----

// Tests that two persistent buffers cannot have one name.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-note @+1 {{the other buffer}}
  %a = cairn.buffer param "w" : memref<4xf32>
  // expected-error @+1 {{'cairn.buffer' op names 'w', which another buffer of the program has}}
  %b = cairn.buffer optimizer "w" : memref<4xf32>
}

// -----

// Tests that names are unique across the program: a per-step buffer cannot
// take a persistent buffer's name.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-note @+1 {{the other buffer}}
  %x = cairn.buffer input "x" : memref<4xf32>
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op names 'x', which another buffer of the program has}}
    %t = cairn.buffer temp "x" : memref<4xf32>
  }
}

// -----

// Tests that names are unique across the two steps and that views share
// the buffers' names.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4xf32>
  cairn.step train_step {
    // expected-note @+1 {{the other buffer}}
    %v = cairn.view activation "reshape" %x : memref<4xf32> to memref<2x2xf32>
  }
  cairn.step forward {
    // expected-error @+1 {{'cairn.view' op names 'reshape', which another buffer of the program has}}
    %w = cairn.view activation "reshape" %x : memref<4xf32> to memref<2x2xf32>
  }
}

// -----

// Tests that a program has at most one step of each kind.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
  }
  cairn.step forward {
  }
  // expected-error @+1 {{'cairn.step' op is the second 'forward' step of the program}}
  cairn.step forward {
  }
}

// -----

// Tests that a view cannot be in the program's body.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4xf32>
  // expected-error @+1 {{'cairn.view' op cannot be in a cairn.program's body (it holds persistent cairn.buffer ops and cairn.step ops)}}
  %v = cairn.view input "flat" %x : memref<4xf32> to memref<2x2xf32>
}

// -----

// Tests that a tensor-level op cannot be in the program's body.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.constant' op cannot be in a cairn.program's body (it holds persistent cairn.buffer ops and cairn.step ops)}}
  %c = cairn.constant dense<1.0> : tensor<f32>
}

// -----

// Tests that once the program is planned every buffer with bytes has an
// offset.
cairn.program "M" attributes {arena_bytes = 1024 : i64, batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" at 0 : memref<4xf32>
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op has no offset in the planned arena}}
    %t = cairn.buffer temp "t" : memref<4xf32>
  }
}

// -----

// Tests that a planned buffer lies inside the arena: 512 bytes at 768 end at
// byte 1280, past an arena of 1024.
cairn.program "M" attributes {arena_bytes = 1024 : i64, batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op of 512 bytes at offset 768 ends past the arena's 1024 bytes}}
  %x = cairn.buffer input "x" at 768 : memref<128xf32>
}

// -----

// Tests that a buffer may end exactly at the arena's end (512 bytes at 512)
// and that a buffer without bytes needs no offset, while 8 bytes at 1024 end
// past it.
cairn.program "M" attributes {arena_bytes = 1024 : i64, batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" at 512 : memref<128xf32>
  %e = cairn.buffer input "empty" : memref<0xf32>
  // expected-error @+1 {{'cairn.buffer' op of 8 bytes at offset 1024 ends past the arena's 1024 bytes}}
  %y = cairn.buffer input "y" at 1024 : memref<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// cairn.step
//===----------------------------------------------------------------------===//

// Tests that a tensor-level op cannot be in a step.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{'cairn.constant' op cannot be in a cairn.step (it holds cairn.buffer, cairn.view and kernel ops)}}
    %c = cairn.constant dense<1.0> : tensor<f32>
  }
}

// -----

// Tests that a step is inside a program (ODS).
// expected-error @+1 {{'cairn.step' op expects parent op 'cairn.program'}}
cairn.step train_step {
}

// -----

// Tests that a step's kind is one of the two (ODS enum).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [train_step, forward, eval_loss]}}
  cairn.step backward {
  }
}

// -----

//===----------------------------------------------------------------------===//
// cairn.buffer
//===----------------------------------------------------------------------===//

// Tests that a buffer has a name.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op expected a non-empty name}}
  %x = cairn.buffer input "" : memref<4xf32>
}

// -----

// Tests that a persistent buffer (here a param) cannot be declared in a step.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op is a param buffer, which lives for the whole run: it belongs in the cairn.program's body}}
    %w = cairn.buffer param "w" : memref<4xf32>
  }
}

// -----

// Tests that a persistent buffer cannot be declared outside a program.
// expected-error @+1 {{'cairn.buffer' op is an output buffer, which lives for the whole run: it belongs in the cairn.program's body}}
%loss = cairn.buffer output "loss" : memref<f32>

// -----

// Tests that a per-step buffer cannot be declared in the program's body.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op is a grad buffer, which lives within one step: it belongs in a cairn.step}}
  %g = cairn.buffer grad "grad.w" : memref<4xf32>
}

// -----

// Tests that an offset is a multiple of 256.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op expected an offset that is a non-negative multiple of 256 but got 100}}
  %x = cairn.buffer input "x" at 100 : memref<4xf32>
}

// -----

// Tests that an offset is not negative, aligned or not.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op expected an offset that is a non-negative multiple of 256 but got -256}}
  %x = cairn.buffer input "x" at -256 : memref<4xf32>
}

// -----

// Tests that only a workspace has spare bytes, more than none, and only in
// a planned arena (cairn-grow-workspaces).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op expected spare bytes only on a workspace, and more than 0}}
    %t = cairn.buffer temp "t" at 0 spare 256 : memref<4xf32>
  }
}

// -----

cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op expected spare bytes only on a workspace, and more than 0}}
    %t = cairn.buffer workspace "t" at 0 spare 0 : memref<4xf32>
  }
}

// -----

cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op has spare bytes but no offset: they are bytes of a planned arena}}
    %t = cairn.buffer workspace "t" spare 256 : memref<4xf32>
  }
}

// -----

// Tests that a workspace's spare bytes lie inside the arena too.
cairn.program "M" attributes {arena_bytes = 1024 : i64, batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op of 1040 bytes at offset 0 ends past the arena's 1024 bytes}}
    %t = cairn.buffer workspace "t" at 0 spare 1024 : memref<4xf32>
  }
}

// -----

// Tests that a per-step buffer takes no initializer.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op has an initializer, which only param, buffer and optimizer buffers take}}
    %t = cairn.buffer temp "t" {init = #cairn.init<zeros, 0.0>} : memref<4xf32>
  }
}

// -----

// Tests that an input, though persistent, takes no initializer.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op has an initializer, which only param, buffer and optimizer buffers take}}
  %x = cairn.buffer input "x" {init = #cairn.init<uniform, 1.0>} : memref<4xf32>
}

// -----

// Tests that a buffer is in place over a buffer, not over a view.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %a = cairn.buffer activation "a" : memref<2x2xf32>
    %v = cairn.view activation "v" %a : memref<2x2xf32> to memref<4xf32>
    // expected-error @+1 {{'cairn.buffer' op is in place over a value that is no cairn.buffer (a view or an argument)}}
    %b = cairn.buffer activation "b" in_place(%v : memref<4xf32>) : memref<4xf32>
  }
}

// -----

// Tests that a per-step buffer is not in place over a persistent one.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4xf32>
  cairn.step train_step {
    // expected-error @+1 {{'cairn.buffer' op is in place over 'x', but only per-step buffers are written in place over one another}}
    %b = cairn.buffer activation "b" in_place(%x : memref<4xf32>) : memref<4xf32>
  }
}

// -----

// Tests that a persistent buffer is not in place over another.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %loss = cairn.buffer output "loss" : memref<4xf32>
  // expected-error @+1 {{'cairn.buffer' op is in place over 'loss', but only per-step buffers are written in place over one another}}
  %out = cairn.buffer output "output" in_place(%loss : memref<4xf32>) : memref<4xf32>
}

// -----

// Tests that a buffer in place over another has its size.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %a = cairn.buffer activation "a" : memref<4x16xf32>
    // expected-error @+1 {{'cairn.buffer' op is in place over 'a', whose 'memref<4x16xf32>' holds other elements than its 'memref<4x8xf32>'}}
    %b = cairn.buffer activation "b" in_place(%a : memref<4x16xf32>) : memref<4x8xf32>
  }
}

// -----

// Tests that a buffer in place over another has its element type, even
// where the byte counts agree.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %a = cairn.buffer activation "a" : memref<4xi32>
    // expected-error @+1 {{'cairn.buffer' op is in place over 'a', whose 'memref<4xi32>' holds other elements than its 'memref<4xf32>'}}
    %b = cairn.buffer activation "b" in_place(%a : memref<4xi32>) : memref<4xf32>
  }
}

// -----

// Tests that a buffer in place over another is at its offset.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %a = cairn.buffer activation "a" at 256 : memref<4xf32>
    // expected-error @+1 {{'cairn.buffer' op is in place over 'a' at offset 512, but that buffer is at 256}}
    %b = cairn.buffer activation "b" at 512 in_place(%a : memref<4xf32>) : memref<4xf32>
  }
}

// -----

// Tests that a buffer's kind is one of the ten (ODS enum).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [input, param, buffer, optimizer, output, grad, activation, saved, temp, workspace]}}
  %x = cairn.buffer scratch "x" : memref<4xf32>
}

// -----

// Tests that a buffer is a static memref of an element type the kernels
// take (ODS).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op result #0 must be statically shaped memref of 16-bit float or bfloat16 type or 32-bit float or 64-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'memref<4xi8>'}}
  %x = cairn.buffer input "x" : memref<4xi8>
}

// -----

//===----------------------------------------------------------------------===//
// cairn.view
//===----------------------------------------------------------------------===//

// Tests that a view has its source's element count.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4x8xf32>
  cairn.step forward {
    // expected-error @+1 {{'cairn.view' op expected a view with the element type and count of its source 'memref<4x8xf32>' but got 'memref<4x4xf32>'}}
    %v = cairn.view activation "v" %x : memref<4x8xf32> to memref<4x4xf32>
  }
}

// -----

// Tests that a view has its source's element type.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4xf32>
  cairn.step forward {
    // expected-error @+1 {{'cairn.view' op expected a view with the element type and count of its source 'memref<4xf32>' but got 'memref<2x2xi32>'}}
    %v = cairn.view activation "v" %x : memref<4xf32> to memref<2x2xi32>
  }
}

// -----

// Tests that a view reads a buffer: here a block argument of the step.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
  ^bb0(%arg: memref<4xf32>):
    // expected-error @+1 {{'cairn.view' op views a value that is no cairn.buffer}}
    %v = cairn.view activation "v" %arg : memref<4xf32> to memref<2x2xf32>
  }
}

// -----

// Tests that a view has a name.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4xf32>
  cairn.step forward {
    // expected-error @+1 {{'cairn.view' op expected a non-empty name}}
    %v = cairn.view activation "" %x : memref<4xf32> to memref<2x2xf32>
  }
}

// -----

//===----------------------------------------------------------------------===//
// Kernels: the printed form
//===----------------------------------------------------------------------===//

// Tests that `ins` has one entry per input group: linear has three (input,
// weight, bias).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %w = cairn.buffer param "w" : memref<16x8xf32>
  cairn.step forward {
    %x = cairn.buffer activation "x" : memref<4x8xf32>
    %y = cairn.buffer activation "y" : memref<4x16xf32>
    // expected-error @+1 {{expected 3 entries in 'ins' (an operand, or _ for an absent optional one) but got 2}}
    cairn.kernel.linear ins(%x, %w : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64}
  }
}

// -----

// Tests that `outs` has one entry per output group: sgd_update has two
// (new_param, new_momentum_buffer).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %p = cairn.buffer param "p" : memref<4xf32>
  cairn.step train_step {
    %g = cairn.buffer grad "grad.p" : memref<4xf32>
    // expected-error @+1 {{expected 2 entries in 'outs' (an operand, or _ for an absent optional one) but got 1}}
    cairn.kernel.sgd_update ins(%p, %g, _, _ : memref<4xf32>, memref<4xf32>) outs(%p : memref<4xf32>) {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, n = 4 : i64, nesterov = false, weight_decay = 0.0 : f64}
  }
}

// -----

// Tests that a variadic group (concat's inputs) takes no `_`.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4x2xf32>
    %c = cairn.buffer activation "c" : memref<4x4xf32>
    // expected-error @+1 {{expected 1 entries in 'ins' (an operand, or _ for an absent optional one) but got 3}}
    cairn.kernel.concat ins(%a, _, %a : memref<4x2xf32>, memref<4x2xf32>) outs(%c : memref<4x4xf32>) {dim = 1 : i64, starts = array<i64: 0, 2>}
  }
}

// -----

// Tests that every operand of a group has its type.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4xf32>
    %b = cairn.buffer activation "b" : memref<4xf32>
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{expected 2 types in 'ins' but got 1}}
    cairn.kernel.add ins(%a, %b : memref<4xf32>) outs(%c : memref<4xf32>) {lhs_strides = array<i64: 1>, n = 4 : i64, rhs_strides = array<i64: 1>}
  }
}

// -----

// Tests that `_` stands for an operand, not a type.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4xf32>
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{expected 0 types in 'ins' but got 1}}
    cairn.kernel.relu ins(_ : memref<4xf32>) outs(%c : memref<4xf32>) {n = 4 : i64}
  }
}

// -----

// Tests that a kernel's required attributes are there (ODS).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4xf32>
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.relu' op requires attribute 'n'}}
    cairn.kernel.relu ins(%a : memref<4xf32>) outs(%c : memref<4xf32>)
  }
}

// -----

// Tests that a required operand cannot be left out of a kernel that is not
// segmented (ODS counts relu's operands).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.relu' op expected 2 operands, but found 1}}
    cairn.kernel.relu ins(_) outs(%c : memref<4xf32>) {n = 4 : i64}
  }
}

// -----

// Tests that a kernel is inside a step (ODS).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %a = cairn.buffer input "a" : memref<4xf32>
  %c = cairn.buffer output "c" : memref<4xf32>
  // expected-error @+1 {{'cairn.kernel.relu' op expects parent op 'cairn.step'}}
  cairn.kernel.relu ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {n = 4 : i64}
}

// -----

//===----------------------------------------------------------------------===//
// Kernels: verifyKernelOp
//===----------------------------------------------------------------------===//

// Tests that a kernel reads buffers and views only: here a block argument.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
  ^bb0(%arg: memref<4xf32>):
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.relu' op expected every operand to be a cairn.buffer or cairn.view}}
    cairn.kernel.relu ins(%arg : memref<4xf32>) outs(%c : memref<4xf32>) {n = 4 : i64}
  }
}

// -----

// Tests that a kernel never writes a view.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4x2xf32>
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<8xf32>
    %flat = cairn.view activation "flat" %a : memref<8xf32> to memref<4x2xf32>
    // expected-error @+1 {{'cairn.kernel.relu' op writes the view 'flat': views are read, never written}}
    cairn.kernel.relu ins(%x : memref<4x2xf32>) outs(%flat : memref<4x2xf32>) {n = 8 : i64}
  }
}

// -----

// Tests that a kernel's workspace is a workspace buffer.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cuda"} {
  %w = cairn.buffer param "w" : memref<16x8xf32>
  cairn.step forward {
    %x = cairn.buffer activation "x" : memref<4x8xf32>
    %y = cairn.buffer activation "y" : memref<4x16xf32>
    %t = cairn.buffer temp "t" : memref<64xf32>
    // expected-error @+1 {{'cairn.kernel.linear' op expected a workspace buffer as its workspace but got 't'}}
    cairn.kernel.linear ins(%x, %w, _ : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) workspace(%t : memref<64xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
  }
}

// -----

// Tests that a view of a workspace buffer is no workspace either.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cuda"} {
  %w = cairn.buffer param "w" : memref<16x8xf32>
  cairn.step forward {
    %x = cairn.buffer activation "x" : memref<4x8xf32>
    %y = cairn.buffer activation "y" : memref<4x16xf32>
    %ws = cairn.buffer workspace "ws" : memref<64xf32>
    %v = cairn.view workspace "ws.view" %ws : memref<64xf32> to memref<8x8xf32>
    // expected-error @+1 {{'cairn.kernel.linear' op expected a workspace buffer as its workspace but got the view 'ws.view'}}
    cairn.kernel.linear ins(%x, %w, _ : memref<4x8xf32>, memref<16x8xf32>) outs(%y : memref<4x16xf32>) workspace(%v : memref<8x8xf32>) {in = 8 : i64, out = 16 : i64, rows = 4 : i64, workspace_bytes = 256 : i64}
  }
}

// -----

// Tests that a kernel's workspace is none of its inputs.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cuda"} {
  %w = cairn.buffer param "w" : memref<4x4xf32>
  cairn.step forward {
    %ws = cairn.buffer workspace "ws" : memref<4x4xf32>
    %y = cairn.buffer activation "y" : memref<4x4xf32>
    // expected-error @+1 {{'cairn.kernel.linear' op uses its workspace 'ws' as an input or output too}}
    cairn.kernel.linear ins(%ws, %w, _ : memref<4x4xf32>, memref<4x4xf32>) outs(%y : memref<4x4xf32>) workspace(%ws : memref<4x4xf32>) {in = 4 : i64, out = 4 : i64, rows = 4 : i64, workspace_bytes = 64 : i64}
  }
}

// -----

// Tests that a kernel's workspace is not its output either.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cuda"} {
  %w = cairn.buffer param "w" : memref<4x4xf32>
  cairn.step forward {
    %x = cairn.buffer activation "x" : memref<4x4xf32>
    %ws = cairn.buffer workspace "ws" : memref<4x4xf32>
    // expected-error @+1 {{'cairn.kernel.linear' op uses its workspace 'ws' as an input or output too}}
    cairn.kernel.linear ins(%x, %w, _ : memref<4x4xf32>, memref<4x4xf32>) outs(%ws : memref<4x4xf32>) workspace(%ws : memref<4x4xf32>) {in = 4 : i64, out = 4 : i64, rows = 4 : i64, workspace_bytes = 64 : i64}
  }
}

// -----

// Tests that an elementwise kernel's n is its result's element count.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4x16xf32>
    %r = cairn.buffer activation "relu" : memref<4x16xf32>
    // expected-error @+1 {{'cairn.kernel.relu' op expected n = 64, the elements of its result 'relu', but got 32}}
    cairn.kernel.relu ins(%a : memref<4x16xf32>) outs(%r : memref<4x16xf32>) {n = 32 : i64}
  }
}

// -----

// Tests that an elementwise kernel reads its result's element type: a
// broadcast operand of another type is no exception.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %b = cairn.buffer param "b" : memref<4xf64>
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<2x4xf32>
    %c = cairn.buffer activation "c" : memref<2x4xf32>
    // expected-error @+1 {{'cairn.kernel.add' op reads 'b' of type 'memref<4xf64>' but writes 'memref<2x4xf32>'}}
    cairn.kernel.add ins(%a, %b : memref<2x4xf32>, memref<4xf64>) outs(%c : memref<2x4xf32>) {lhs_strides = array<i64: 4, 1>, n = 8 : i64, rhs_strides = array<i64: 0, 1>}
  }
}

// -----

// Tests that the element-type check names a view by its own name.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %x = cairn.buffer input "x" : memref<4xi32>
  cairn.step forward {
    %v = cairn.view activation "x.view" %x : memref<4xi32> to memref<2x2xi32>
    %c = cairn.buffer activation "c" : memref<2x2xf32>
    // expected-error @+1 {{'cairn.kernel.sigmoid' op reads the view 'x.view' of type 'memref<2x2xi32>' but writes 'memref<2x2xf32>'}}
    cairn.kernel.sigmoid ins(%v : memref<2x2xi32>) outs(%c : memref<2x2xf32>) {n = 4 : i64}
  }
}

// -----

//===----------------------------------------------------------------------===//
// Kernels: in-place updates
//===----------------------------------------------------------------------===//

// Tests that sgd_update writes the param it reads.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %p = cairn.buffer param "p" : memref<4xf32>
  %q = cairn.buffer param "q" : memref<4xf32>
  cairn.step train_step {
    %g = cairn.buffer grad "grad.p" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.sgd_update' op updates in place: expected output #0 to be its input 'p' but got 'q'}}
    cairn.kernel.sgd_update ins(%p, %g, _, _ : memref<4xf32>, memref<4xf32>) outs(%q, _ : memref<4xf32>) {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.0 : f64, n = 4 : i64, nesterov = false, weight_decay = 0.0 : f64}
  }
}

// -----

// Tests that sgd_update writes the momentum buffer it reads: a present
// momentum buffer needs its output too.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %p = cairn.buffer param "p" : memref<4xf32>
  %m = cairn.buffer optimizer "p.momentum_buffer" : memref<4xf32>
  cairn.step train_step {
    %g = cairn.buffer grad "grad.p" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.sgd_update' op updates in place: expected output #1 to be its input 'p.momentum_buffer'}}
    cairn.kernel.sgd_update ins(%p, %g, %m, _ : memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%p, _ : memref<4xf32>) {dampening = 0.0 : f64, lr = 0.1 : f64, momentum = 0.9 : f64, n = 4 : i64, nesterov = false, weight_decay = 0.0 : f64}
  }
}

// -----

// Tests that adam_update writes each moment over itself: the two moments
// swapped are rejected.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %p = cairn.buffer param "p" : memref<4xf32>
  %m = cairn.buffer optimizer "p.exp_avg" : memref<4xf32>
  %v = cairn.buffer optimizer "p.exp_avg_sq" : memref<4xf32>
  cairn.step train_step {
    %g = cairn.buffer grad "grad.p" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.adam_update' op updates in place: expected output #1 to be its input 'p.exp_avg' but got 'p.exp_avg_sq'}}
    cairn.kernel.adam_update ins(%p, %g, %m, %v, _ : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%p, %v, %m : memref<4xf32>, memref<4xf32>, memref<4xf32>) {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, lr = 0.001 : f64, n = 4 : i64, weight_decay = 0.0 : f64}
  }
}

// -----

// Tests that batch_norm_running_update writes the statistics it reads.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %mean = cairn.buffer buffer "bn.running_mean" : memref<2xf32>
  %var = cairn.buffer buffer "bn.running_var" : memref<2xf32>
  %count = cairn.buffer buffer "bn.num_batches_tracked" : memref<i64>
  cairn.step train_step {
    %x = cairn.buffer activation "x" : memref<4x2xf32>
    %new = cairn.buffer temp "new_var" : memref<2xf32>
    // expected-error @+1 {{'cairn.kernel.batch_norm_running_update' op updates in place: expected output #1 to be its input 'bn.running_var' but got 'new_var'}}
    cairn.kernel.batch_norm_running_update ins(%x, %mean, %var, %count : memref<4x2xf32>, memref<2xf32>, memref<2xf32>, memref<i64>) outs(%mean, %new, %count : memref<2xf32>, memref<2xf32>, memref<i64>) {c = 2 : i64, momentum = 0.1 : f64, n = 4 : i64, spatial = 1 : i64}
  }
}

// -----

// Tests that a required operand cannot be left out of a kernel whose
// groups have recorded sizes (linear's input).
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "", target = "cpu"} {
  %w = cairn.buffer param "w" : memref<4x4xf32>
  %b = cairn.buffer param "b" : memref<4xf32>
  cairn.step train_step {
    %r = cairn.buffer temp "r" : memref<4x4xf32>
    // expected-error @+1 {{'cairn.kernel.linear' op expected operand group #0 to be one buffer but got 0}}
    cairn.kernel.linear ins(_, %w, %b : memref<4x4xf32>, memref<4xf32>) outs(%r : memref<4x4xf32>) {in = 4 : i64, out = 4 : i64, rows = 4 : i64}
  }
}

// -----

// Tests that an offset near the largest i64 does not overflow the arena
// check.
cairn.program "Overflow" attributes {arena_bytes = 1024 : i64, batch = 1 : i64, optimizer = "", source = "o.cairn", target = "cpu"} {
  // expected-error @+1 {{'cairn.buffer' op of 256 bytes at offset 9223372036854775552 ends past the arena's 1024 bytes}}
  %x = cairn.buffer input "x" at 9223372036854775552 : memref<64xf32>
  cairn.step train_step {
  }
}

// -----

// Tests that a kernel cannot read a per-step buffer no kernel has written.
cairn.program "Garbage" attributes {batch = 1 : i64, optimizer = "", source = "g.cairn", target = "cpu"} {
  %a = cairn.buffer input "a" : memref<4xf32>
  cairn.step train_step {
    %garbage = cairn.buffer temp "garbage" : memref<4xf32>
    %r = cairn.buffer temp "r" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.add' op reads 'garbage' before any kernel of the step writes it}}
    cairn.kernel.add ins(%a, %garbage : memref<4xf32>, memref<4xf32>) outs(%r : memref<4xf32>) {lhs_strides = array<i64: 1>, n = 4 : i64, rhs_strides = array<i64: 1>}
  }
}

// -----

// Tests that a kernel takes no attribute its op does not declare.
cairn.program "Bogus" attributes {batch = 1 : i64, optimizer = "", source = "b.cairn", target = "cpu"} {
  %a = cairn.buffer input "a" : memref<4xf32>
  cairn.step train_step {
    %r = cairn.buffer temp "r" : memref<4xf32>
    // expected-error @+1 {{'cairn.kernel.relu' op has an attribute no kernel takes: 'bogus'}}
    cairn.kernel.relu ins(%a : memref<4xf32>) outs(%r : memref<4xf32>) {bogus = 1 : i64, n = 4 : i64}
  }
}

// -----

// Tests that a concatenation has inputs, and a start for each.
cairn.program "Concat" attributes {batch = 1 : i64, optimizer = "", source = "c.cairn", target = "cpu"} {
  %a = cairn.buffer input "a" : memref<4xf32>
  cairn.step train_step {
    %r = cairn.buffer temp "r" : memref<8xf32>
    // expected-error @+1 {{'cairn.kernel.concat' op expected one start per input (2) but got 1}}
    cairn.kernel.concat ins(%a, %a : memref<4xf32>, memref<4xf32>) outs(%r : memref<8xf32>) {dim = 0 : i64, starts = array<i64: 0>}
  }
}

// -----

// Tests that a kernel reads its before_first_use marker as a unit.
cairn.program "Glue" attributes {batch = 1 : i64, optimizer = "", source = "g.cairn", target = "cpu"} {
  %a = cairn.buffer input "a" : memref<4xf32>
  cairn.step train_step {
    %r = cairn.buffer temp "r" : memref<4xf32>
    // expected-error @+1 {{expected 'cairn.before_first_use' to be a unit attribute but got 1 : i64}}
    cairn.kernel.relu ins(%a : memref<4xf32>) outs(%r : memref<4xf32>) {cairn.before_first_use = 1 : i64, n = 4 : i64}
  }
}

// -----

// Tests that the recompute mark is a unit on a kernel.
cairn.program "Mark" attributes {batch = 1 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %a = cairn.buffer input "a" : memref<4xf32>
  cairn.step train_step {
    %r = cairn.buffer temp "r" : memref<4xf32>
    // expected-error @+1 {{expected 'cairn.recompute' to be a unit attribute but got "yes"}}
    cairn.kernel.relu ins(%a : memref<4xf32>) outs(%r : memref<4xf32>) {cairn.recompute = "yes", n = 4 : i64}
  }
}

// -----

cairn.program "Mark" attributes {batch = 1 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{expected 'cairn.recompute' on a kernel but found it on 'cairn.buffer'}}
    %r = cairn.buffer temp "r" {cairn.recompute} : memref<4xf32>
  }
}

// -----

// Tests that a kernel is recomputed per use only where it is recomputed.
cairn.program "PerUse" attributes {batch = 1 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %a = cairn.buffer temp "a" : memref<4xf32>
    %r = cairn.buffer temp "r" : memref<4xf32>
    // expected-error @+1 {{expected 'cairn.recompute_per_use' only with 'cairn.recompute'}}
    cairn.kernel.relu ins(%a : memref<4xf32>) outs(%r : memref<4xf32>) {cairn.recompute_per_use, n = 4 : i64}
  }
}

// -----

// Tests that the memory budget is a positive size on the program.
// expected-error @+1 {{expected 'cairn.memory_budget' to be an i64 integer >= 1 but got 0 : i64}}
cairn.program "Budget" attributes {batch = 1 : i64, optimizer = "", source = "b.cairn", target = "cpu", cairn.memory_budget = 0 : i64} {
}

// -----

cairn.program "Budget" attributes {batch = 1 : i64, optimizer = "", source = "b.cairn", target = "cpu"} {
  cairn.step train_step {
    // expected-error @+1 {{expected 'cairn.memory_budget' on a cairn.program but found it on 'cairn.buffer'}}
    %r = cairn.buffer temp "r" {cairn.memory_budget = 100 : i64} : memref<4xf32>
  }
}

// -----

// Tests that skip_select commits over the old value's own buffer.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  %m = cairn.buffer buffer "bn.running_mean" : memref<4xf32>
  cairn.step train_step {
    %new = cairn.buffer temp "new" : memref<4xf32>
    %other = cairn.buffer temp "other" : memref<4xf32>
    %found = cairn.buffer temp "found_inf" : memref<f32>
    // expected-error @+1 {{'cairn.kernel.skip_select' op updates in place: expected output #0 to be its input 'bn.running_mean' but got 'other'}}
    cairn.kernel.skip_select ins(%m, %new, %found : memref<4xf32>, memref<4xf32>, memref<f32>) outs(%other : memref<4xf32>) {n = 4 : i64}
  }
}

// -----

// Tests that a cast converts n elements, to or from float32.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %x = cairn.buffer temp "x" : memref<4xf32>
    %h = cairn.buffer temp "h" : memref<4xf16>
    // expected-error @+1 {{'cairn.kernel.cast' op expected n = the elements of its input and result but got 3}}
    cairn.kernel.cast ins(%x : memref<4xf32>) outs(%h : memref<4xf16>) {n = 3 : i64}
  }
}

// -----

cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %h = cairn.buffer temp "h" : memref<4xf16>
    %b = cairn.buffer temp "b" : memref<4xbf16>
    // expected-error @+1 {{'cairn.kernel.cast' op converts to or from float32, not 'f16' to 'bf16'}}
    cairn.kernel.cast ins(%h : memref<4xf16>) outs(%b : memref<4xbf16>) {n = 4 : i64}
  }
}

// -----

//===----------------------------------------------------------------------===//
// Kernels: the replicas' gradient sums
//===----------------------------------------------------------------------===//

// Tests that a bucket's workspace is a run of floats.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %g = cairn.buffer grad "grad.p" : memref<4xf32>
    %h = cairn.buffer grad "grad.q" : memref<2xf32>
    %b = cairn.buffer temp "all_reduce.bucket0" : memref<3xi32>
    // expected-error @+1 {{'cairn.kernel.all_reduce_start' op expected a 1-D float32 workspace as its bucket but got 'all_reduce.bucket0'}}
    cairn.kernel.all_reduce_start ins(%g, %h : memref<4xf32>, memref<2xf32>) outs(%b : memref<3xi32>) {index = 0 : i64}
  }
}

// -----

// Tests that the gradients summed are float32.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %g = cairn.buffer grad "grad.p" : memref<4xbf16>
    %b = cairn.buffer temp "all_reduce.bucket0" : memref<8xf32>
    // expected-error @+1 {{'cairn.kernel.all_reduce_start' op sums float32 gradients, not 'grad.p'}}
    cairn.kernel.all_reduce_start ins(%g : memref<4xbf16>) outs(%b : memref<8xf32>) {index = 0 : i64}
  }
}

// -----

// Tests that a wait writes back into the very gradients it reads.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %g = cairn.buffer grad "grad.p" : memref<4xf32>
    %h = cairn.buffer grad "grad.q" : memref<4xf32>
    %b = cairn.buffer temp "all_reduce.bucket0" : memref<6xf32>
    // expected-error @+1 {{'cairn.kernel.all_reduce_wait' op updates in place: expected output #0 to be its input 'grad.p' but got 'grad.q'}}
    cairn.kernel.all_reduce_wait ins(%b, %g : memref<6xf32>, memref<4xf32>) outs(%h : memref<4xf32>) {index = 0 : i64}
  }
}

// -----

// Tests that cairn.replicas counts two or more replicas, on a program.
// expected-error @+1 {{expected 'cairn.replicas' to be an i64 integer >= 2 but got 1 : i64}}
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu", cairn.replicas = 1 : i64} {
}

// -----

// Tests that cairn.sync_batchnorm marks the program of a replica.
// expected-error @+1 {{expected 'cairn.sync_batchnorm' on the cairn.program of a replica (with 'cairn.replicas')}}
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu", cairn.sync_batchnorm} {
}

// -----

// Tests that a device's clip_coefficient names where each of its gradients'
// partials go, then their count.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %g = cairn.buffer temp "g" : memref<4xf32>
    %c = cairn.buffer temp "c" : memref<f32>
    %w = cairn.buffer workspace "w" : memref<3xf64>
    // expected-error @+1 {{'cairn.kernel.clip_coefficient' op expected device_chunks of 2 entries (one per gradient, then the count) but got 1}}
    cairn.kernel.clip_coefficient ins(%g : memref<4xf32>) outs(%c : memref<f32>) workspace(%w : memref<3xf64>) {device_chunks = array<i64: 3>, max_norm = 1.0 : f64, norm_type = 2.0 : f64}
  }
}

// -----

// Tests that the workspace holds every device's partials.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %g = cairn.buffer temp "g" : memref<4xf32>
    %c = cairn.buffer temp "c" : memref<f32>
    %w = cairn.buffer workspace "w" : memref<1xf64>
    // expected-error @+1 {{'cairn.kernel.clip_coefficient' op expected a workspace of at least 3 partials (device_chunks' count)}}
    cairn.kernel.clip_coefficient ins(%g : memref<4xf32>) outs(%c : memref<f32>) workspace(%w : memref<1xf64>) {device_chunks = array<i64: 1, 3>, max_norm = 1.0 : f64, norm_type = 2.0 : f64}
  }
}

// -----

// Tests that a gradient's partials fall among the count.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step train_step {
    %g = cairn.buffer temp "g" : memref<4xf32>
    %c = cairn.buffer temp "c" : memref<f32>
    %w = cairn.buffer workspace "w" : memref<3xf64>
    // expected-error @+1 {{'cairn.kernel.clip_coefficient' op device_chunks entry 0 puts 1 partials at 3, outside the 3 partials}}
    cairn.kernel.clip_coefficient ins(%g : memref<4xf32>) outs(%c : memref<f32>) workspace(%w : memref<3xf64>) {device_chunks = array<i64: 3, 3>, max_norm = 1.0 : f64, norm_type = 2.0 : f64}
  }
}

// -----

// Tests that a chain's dropouts each have a rate, a stream and a replica
// stride, and none without a dropout.
cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4xf32>
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{expected dropout_p, dropout_streams and dropout_replica_strides with one entry per dropout (1), or none without a dropout}}
    cairn.kernel.elementwise_chain ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {args = array<i64: 0, -1, 1, -1>, dropout_p = array<f64: 0.5>, dropout_streams = array<i64: 0>, n = 4 : i64, ops = ["relu", "dropout"]}
  }
}

// -----

cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4xf32>
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{expected dropout_p, dropout_streams and dropout_replica_strides with one entry per dropout (0), or none without a dropout}}
    cairn.kernel.elementwise_chain ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {args = array<i64: 0, -1, 1, -1>, dropout_p = array<f64: 0.5>, dropout_replica_strides = array<i64: 0>, dropout_streams = array<i64: 0>, n = 4 : i64, ops = ["relu", "sigmoid"]}
  }
}

// -----

cairn.program "M" attributes {batch = 4 : i64, optimizer = "", source = "m.cairn", target = "cpu"} {
  cairn.step forward {
    %a = cairn.buffer activation "a" : memref<4xf32>
    %c = cairn.buffer activation "c" : memref<4xf32>
    // expected-error @+1 {{expected dropout rates in [0, 1] but got 1.5}}
    cairn.kernel.elementwise_chain ins(%a : memref<4xf32>) outs(%c : memref<4xf32>) {args = array<i64: 0, -1, 1, -1>, dropout_p = array<f64: 1.5>, dropout_replica_strides = array<i64: 0>, dropout_streams = array<i64: 0>, n = 4 : i64, ops = ["relu", "dropout"]}
  }
}
