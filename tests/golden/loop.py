def grad_loop(W, x):
    tape = Tape()
    h = x
    range_3 = range(3)
    for i in range_3:
        h_matmul_W = h @ W
        tape.push(h)
        h = np.tanh(h_matmul_W)
    h_squared = h ** 2
    result = np.sum(h_squared)

    d_result = seed(result)
    # grad of: return np.sum(h**2)
    d_h_squared = np.broadcast_to(d_result, np.shape(h_squared))
    d_h = d_h_squared * 2 * h
    d_W = zeros_like_value(W)
    for i in reversed(range_3):
        # grad of: h = np.tanh(h @ W)
        d_h_matmul_W = d_h * (1 - h * h)
        h = tape.pop()
        d_h = matmul_left_adjoint(d_h_matmul_W, h, W)
        d_W += matmul_right_adjoint(d_h_matmul_W, h, W)
    return d_W
