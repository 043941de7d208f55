def grad_branch(x, t):
    sum_x = np.sum(x)
    sum_x_gt_t = sum_x > t
    if sum_x_gt_t:
        sin_x = np.sin(x)
        y = sin_x * t
    else:
        y = x * x
    result = np.sum(y)

    d_result = seed(result)
    # grad of: return np.sum(y)
    d_y = np.broadcast_to(d_result, np.shape(y))
    if sum_x_gt_t:
        # grad of: y = np.sin(x) * t
        d_sin_x = unbroadcast(d_y * t, sin_x)
        d_x = d_sin_x * np.cos(x)
    else:
        # grad of: y = x * x
        d_x = d_y * 2 * x
    return d_x
