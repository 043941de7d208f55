def grad_unpack_and_index(x):
    a = x[0]
    b = x[1:]
    b_squared = b ** 2
    sum_b_squared = np.sum(b_squared)
    result = a * sum_b_squared

    d_result = seed(result)
    # grad of: return a * np.sum(b**2)
    d_a = unbroadcast(d_result * sum_b_squared, a)
    d_sum_b_squared = unbroadcast(d_result * a, sum_b_squared)
    d_b = d_sum_b_squared * 2 * b
    # grad of: a, b = x[0], x[1:]
    d_x = getitem_adjoint(d_b, x, np.s_[1:])
    d_x = add_at(d_x, 0, d_a)
    return d_x
