def grad_scalar_chain(t, k):
    s = k * t
    s_times_s = s * s
    s_1 = s_times_s + 1.0
    s_1_plus_k = s_1 + k
    result = s_1 / s_1_plus_k

    d_result = seed(result)
    # grad of: return s / (s + k)
    d_s_1 = unbroadcast(d_result / s_1_plus_k, s_1)
    d_s_1_plus_k = unbroadcast(-d_result * result / s_1_plus_k, s_1_plus_k)
    d_s_1 = d_s_1 + unbroadcast(d_s_1_plus_k, s_1)
    # grad of: s = s * s + 1.0
    d_s = d_s_1 * 2 * s
    # grad of: s = k * t
    d_t = unbroadcast(d_s * k, t)
    return d_t
