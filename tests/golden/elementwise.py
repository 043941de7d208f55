def grad_elementwise(x, y):
    x_times_y = x * y
    sin_x = np.sin(x)
    z = x_times_y + sin_x
    result = np.sum(z)

    d_result = seed(result)
    # grad of: return np.sum(z)
    d_z = np.broadcast_to(d_result, np.shape(z))
    # grad of: z = x * y + np.sin(x)
    d_x_times_y = unbroadcast(d_z, x_times_y)
    d_sin_x = unbroadcast(d_z, sin_x)
    d_x = d_sin_x * np.cos(x)
    d_x += unbroadcast(d_x_times_y * y, x)
    d_y = unbroadcast(d_x_times_y * x, y)
    return d_x, d_y
