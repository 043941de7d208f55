def grad_two_layer(W1, W2, x, y):
    x_matmul_W1 = x @ W1
    h = np.tanh(x_matmul_W1)
    h_matmul_W2 = h @ W2
    h_matmul_W2_minus_y = h_matmul_W2 - y
    h_matmul_W2_minus_y_squared = h_matmul_W2_minus_y ** 2
    result = np.mean(h_matmul_W2_minus_y_squared)

    d_result = seed(result)
    # grad of: return np.mean((h @ W2 - y) ** 2)
    d_h_matmul_W2_minus_y_squared = d_result / (size(h_matmul_W2_minus_y_squared) / size(result))
    d_h_matmul_W2_minus_y = d_h_matmul_W2_minus_y_squared * 2 * h_matmul_W2_minus_y
    d_h_matmul_W2 = unbroadcast(d_h_matmul_W2_minus_y, h_matmul_W2)
    d_h = matmul_left_adjoint(d_h_matmul_W2, h, W2)
    d_W2 = matmul_right_adjoint(d_h_matmul_W2, h, W2)
    # grad of: h = np.tanh(x @ W1)
    d_x_matmul_W1 = d_h * (1 - h * h)
    d_W1 = matmul_right_adjoint(d_x_matmul_W1, x, W1)
    return d_W1, d_W2
