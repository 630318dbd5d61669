// threads 256, dynamic shared memory 50176 bytes
// tw_tmap0: f16 over parameter 1, extents [Mul(Const(1), Param(4)), Const(2147483647)], strides [Mul(Const(1), Param(4))] (elements), box [64, 32], swizzle 128B, L2 promotion 256B
// tw_tmap1: f32 over parameter 2, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(4))] (elements), box [32, 64], swizzle 128B, L2 promotion 128B
extern "C" __global__ void __launch_bounds__(256, 1) tw_k_matmul(tw_f16* __restrict__ a_ptr_, tw_f16* __restrict__ b_ptr_, float* __restrict__ c_ptr_, int M_, int N_, int K_, const __grid_constant__ tw_tmap tw_tmap0, const __grid_constant__ tw_tmap tw_tmap1) {
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap0) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap1) : "memory");
  }
  const int tid = threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int warp = __shfl_sync(0xffffffff, (int)(threadIdx.x >> 5), 0);
  (void)tid; (void)lane; (void)warp;
  const unsigned tw_smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
  (void)tw_smem_u32;
  unsigned char* const tw_smem = tw_smem_raw + 50176;
  // 23:5  
  // aref: 4 slots of 8192 bytes at 0, full/empty barriers at 32768/32800
  if (threadIdx.x == 0) {
  #pragma unroll
    for (int s = 0; s < 4; ++s) {
      tw_mbar_init(tw_smem_u32 + 32768 + 8 * s, 129);
      tw_mbar_init(tw_smem_u32 + 32800 + 8 * s, 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    // partition producer (4 warps, from warp 0)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 128;" ::: "memory");
    const int tid = threadIdx.x - 0;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // 25:13  
    long long const t1 = (long long)(2147483647LL);
    long long const t2 = (long long)(1LL);
    long long const t3 = (long long)(N_);
    long long const t4 = (long long)((unsigned long long)t2 * (unsigned long long)t3);
    long long const t5 = (long long)(1LL);
    long long const t6 = (long long)(N_);
    long long const t7 = (long long)((unsigned long long)t5 * (unsigned long long)t6);
    long long const t8 = (long long)(1LL);
    tw_f16* const t9_base = (tw_f16*)(b_ptr_);
    long long const t9_shape0 = (long long)(t1);
    long long const t9_shape1 = (long long)(t4);
    long long const t9_stride0 = (long long)(t7);
    long long const t9_stride1 = (long long)(t8);
    // 15:13  
    int const pid_m_10 = (int)blockIdx.x;
    // 16:13  
    int const pid_n_11 = (int)blockIdx.y;
    // 17:18  
    int const t12 = (int)(64LL);
    int const t13 = (int)((unsigned)pid_m_10 * (unsigned)t12);
    int t14[2];
    #pragma unroll
    for (int r = 0; r < 2; ++r) t14[r] = 0 + (((lane / 4 % 8) + (warp % 4) * 8 + ((r / 1) % 2) * 32) & 63);
    int t15[2];
    #pragma unroll
    for (int r = 0; r < 2; ++r) t15[r] = t13;
    int rm_16[2];
    #pragma unroll
    for (int r = 0; r < 2; ++r) rm_16[r] = (int)((unsigned)t15[r] + (unsigned)t14[r]);
    // 19:10  
    int rk_17[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) rk_17[r] = 0 + (((lane % 4) * 8 + ((r / 1) % 8) * 1) & 31);
    // 20:22  
    int t18[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t18[r] = rm_16[((r / 8) % 2) * 1];
    int t19[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t19[r] = K_;
    int t20[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t20[r] = (int)((unsigned)t18[r] * (unsigned)t19[r]);
    tw_f16* t21[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t21[r] = a_ptr_;
    tw_f16* t22[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t22[r] = t21[r] + t20[r];
    int t23[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t23[r] = rk_17[((r / 1) % 8) * 1];
    tw_f16* t24[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t24[r] = t22[((r / 8) % 2) * 8];
    int t25[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t25[r] = t23[((r / 1) % 8) * 1];
    tw_f16* a_ptrs_26[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) a_ptrs_26[r] = t24[r] + t25[r];
    // 23:20  
    int const t27 = (int)(0LL);
    int const t28 = (int)(32LL);
    tw_f16* a_ptrs_1_29[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) a_ptrs_1_29[r] = a_ptrs_26[r];
    for (int k_30 = t27; k_30 < K_; k_30 += t28) {
      // 24:34  
      int t31[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) t31[r] = rm_16[((r / 8) % 2) * 1];
      int t32[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) t32[r] = M_;
      bool t33[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) t33[r] = (t31[r] < t32[r]);
      bool t34[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) t34[r] = t33[((r / 8) % 2) * 8];
      tw_f16 const t35 = tw_f2h(0.0f);
      tw_f16 t36[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) t36[r] = t35;
      // 25:13  
      long long const t37 = (long long)(1LL);
      long long const t38 = (long long)(k_30);
      long long const t39 = (long long)((unsigned long long)t37 * (unsigned long long)t38);
      long long const t40 = (long long)(64LL);
      long long const t41 = (long long)(pid_n_11);
      long long const t42 = (long long)((unsigned long long)t40 * (unsigned long long)t41);
      int const t43 = (k_30 / t28);
      const unsigned slot44 = (unsigned)(t43) % 4u, parity45 = ((unsigned)(t43) / 4u) & 1u;
      if (tid == 0) {
        tw_mbar_wait(tw_smem_u32 + 32800 + 8 * slot44, parity45 ^ 1u);
        tw_mbar_expect_tx(tw_smem_u32 + 32768 + 8 * slot44, 4096);
        tw_tma_2d(tw_smem_u32 + 0 + slot44 * 8192 + 4096 + 0, &tw_tmap0, (int)(t42) + 0, (int)(t39), tw_smem_u32 + 32768 + 8 * slot44);
      }
      tw_mbar_wait(tw_smem_u32 + 32800 + 8 * slot44, parity45 ^ 1u);
      bool wide46 = true;
      #pragma unroll
      for (int r = 0; r < 16; r += 8) wide46 &= (((unsigned long long)a_ptrs_1_29[r]) & 15ull) == 0;
      if (wide46) {
        bool inside47 = true;
        #pragma unroll
        for (int r = 0; r < 16; r += 8) inside47 &= t34[r];
        if (inside47) {
          #pragma unroll
          for (int r = 0; r < 16; r += 8) tw_cp_async16(tw_smem_u32 + 0 + slot44 * 8192 + 0 + tw_swz((((lane / 4 % 8) + (warp % 4) * 8 + ((r / 8) % 2) * 32) & 63), ((((lane % 4) * 8 + ((r / 1) % 8) * 1) & 31)) * 2, 64, 64), a_ptrs_1_29[r], 16u);
        } else {
          #pragma unroll
          for (int r = 0; r < 16; r += 8) tw_cp_async16(tw_smem_u32 + 0 + slot44 * 8192 + 0 + tw_swz((((lane / 4 % 8) + (warp % 4) * 8 + ((r / 8) % 2) * 32) & 63), ((((lane % 4) * 8 + ((r / 1) % 8) * 1) & 31)) * 2, 64, 64), a_ptrs_1_29[r], t34[r] ? 16u : 0u);
        }
        tw_cp_async_arrive(tw_smem_u32 + 32768 + 8 * slot44);
      } else {
        #pragma unroll
        for (int g = 0; g < 16; g += 8) {
        #pragma unroll
          for (int r = g; r < g + 8; ++r) *(tw_f16*)(tw_smem_raw + 0 + slot44 * 8192 + 0 + tw_swz((((lane / 4 % 8) + (warp % 4) * 8 + ((g / 8) % 2) * 32) & 63), ((((lane % 4) * 8 + ((g / 1) % 8) * 1) & 31)) * 2, 64, 64) + (r - g) * 2) = t34[g] ? *(a_ptrs_1_29[g] + (r - g)) : (tw_f16)0;
          asm volatile("" ::: "memory");
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        tw_mbar_arrive(tw_smem_u32 + 32768 + 8 * slot44);
      }
      // 27:19  
      int const t48 = (int)(32LL);
      int t49[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) t49[r] = t48;
      tw_f16* a_ptrs_2_50[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) a_ptrs_2_50[r] = a_ptrs_1_29[r] + t49[r];
      tw_f16* a_ptrs_1_51[16];
      #pragma unroll
      for (int r = 0; r < 16; ++r) a_ptrs_1_51[r] = a_ptrs_2_50[r];
      #pragma unroll
      for (int r = 0; r < (int)(sizeof(a_ptrs_1_29) / sizeof(a_ptrs_1_29[0])); ++r) a_ptrs_1_29[r] = a_ptrs_1_51[r];
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
  } else {
    // partition consumer (4 warps, from warp 4)
    const int tid = threadIdx.x - 128;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // 29:5  
    long long const t52 = (long long)(1LL);
    long long const t53 = (long long)(M_);
    long long const t54 = (long long)((unsigned long long)t52 * (unsigned long long)t53);
    long long const t55 = (long long)(1LL);
    long long const t56 = (long long)(N_);
    long long const t57 = (long long)((unsigned long long)t55 * (unsigned long long)t56);
    long long const t58 = (long long)(1LL);
    long long const t59 = (long long)(N_);
    long long const t60 = (long long)((unsigned long long)t58 * (unsigned long long)t59);
    long long const t61 = (long long)(1LL);
    float* const t62_base = (float*)(c_ptr_);
    long long const t62_shape0 = (long long)(t54);
    long long const t62_shape1 = (long long)(t57);
    long long const t62_stride0 = (long long)(t60);
    long long const t62_stride1 = (long long)(t61);
    // 15:13  
    int const pid_m_1_63 = (int)blockIdx.x;
    // 16:13  
    int const pid_n_1_64 = (int)blockIdx.y;
    // 22:11  
    float acc_65[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) acc_65[r] = 0.0f;
    // 23:20  
    int const t66 = (int)(0LL);
    int const t67 = (int)(32LL);
    float acc_2_68[32];
    float acc_69[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) acc_69[r] = 0.0f;
    #pragma unroll
    for (int r = 0; r < 32; ++r) acc_2_68[r] = acc_69[r];
    for (int k_1_70 = t66; k_1_70 < K_; k_1_70 += t67) {
      // 24:13  
      int const t71 = (k_1_70 / t67);
      const unsigned slot72 = (unsigned)(t71) % 4u, parity73 = ((unsigned)(t71) / 4u) & 1u;
      tw_mbar_wait(tw_smem_u32 + 32768 + 8 * slot72, parity73);
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      // 26:15  
      // dot 64x64x32 (#mma<v3, warps = [4, 1], instr = 16x64>)
      float acc_3_74[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_3_74[r] = acc_2_68[r];
      {
        const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
        const int gm_ = (warp / 4) % 1, gn_ = warp / 4;
        #pragma unroll
        for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_74[r]) :: "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        #pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
          const unsigned kb = ks * 32;
          const unsigned k0 = ks * 16;
          const unsigned long long da = tw_desc(smem_u32 + (0 + slot72 * 8192 + 0) + (0 + gm_ * 64) * 64, tw_lin(0, kb, 64, 64), 64);
          const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot72 * 8192 + 4096) + tw_lin(0, (0 + gn_ * 64) * 2, 32, 128), k0 * 128, 128, 32);
          asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}"
            : "+f"(acc_3_74[0]), "+f"(acc_3_74[1]), "+f"(acc_3_74[2]), "+f"(acc_3_74[3]), "+f"(acc_3_74[4]), "+f"(acc_3_74[5]), "+f"(acc_3_74[6]), "+f"(acc_3_74[7]), "+f"(acc_3_74[8]), "+f"(acc_3_74[9]), "+f"(acc_3_74[10]), "+f"(acc_3_74[11]), "+f"(acc_3_74[12]), "+f"(acc_3_74[13]), "+f"(acc_3_74[14]), "+f"(acc_3_74[15]), "+f"(acc_3_74[16]), "+f"(acc_3_74[17]), "+f"(acc_3_74[18]), "+f"(acc_3_74[19]), "+f"(acc_3_74[20]), "+f"(acc_3_74[21]), "+f"(acc_3_74[22]), "+f"(acc_3_74[23]), "+f"(acc_3_74[24]), "+f"(acc_3_74[25]), "+f"(acc_3_74[26]), "+f"(acc_3_74[27]), "+f"(acc_3_74[28]), "+f"(acc_3_74[29]), "+f"(acc_3_74[30]), "+f"(acc_3_74[31])
            : "l"(da), "l"(db));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        #pragma unroll
        for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_74[r]) :: "memory");
      }
      const unsigned slot75 = (unsigned)(t71) % 4u, parity76 = ((unsigned)(t71) / 4u) & 1u;
      if (lane == 0) tw_mbar_arrive(tw_smem_u32 + 32800 + 8 * slot75);
      float acc_2_77[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_2_77[r] = acc_3_74[r];
      #pragma unroll
      for (int r = 0; r < (int)(sizeof(acc_2_68) / sizeof(acc_2_68[0])); ++r) acc_2_68[r] = acc_2_77[r];
    }
    // 29:5  
    long long const t78 = (long long)(64LL);
    long long const t79 = (long long)(pid_m_1_63);
    long long const t80 = (long long)((unsigned long long)t78 * (unsigned long long)t79);
    long long const t81 = (long long)(64LL);
    long long const t82 = (long long)(pid_n_1_64);
    long long const t83 = (long long)((unsigned long long)t81 * (unsigned long long)t82);
    // TMA store: boxes [64, 32] x1 per band of 32 columns (2 bands, 2 buffers), swizzle 128B, staged in 16384 bytes of shared memory (staging at byte 33792)
    #pragma unroll
    for (int band = 0; band < 64; band += 32) {
      const unsigned buf = (33792u + ((unsigned)(band / 32) & 1u) * 8192u);
      if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      asm volatile("bar.sync 2, 128;" ::: "memory");
      #pragma unroll
      for (int r = 0; r < 32; r += 2) {
        union { uint2 u; float e[2]; } t;
        #pragma unroll
        for (int e = 0; e < 2; ++e) t.e[e] = acc_2_68[r + e];
        if ((unsigned)(((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63)) - band) < 32u) *(uint2*)(tw_smem_raw + buf + tw_swz((((lane / 4 % 8) + (warp % 4) * 16 + ((r / 2) % 2) * 8) & 63), (((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63)) - band) * 4, 64, 128)) = t.u;
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      asm volatile("bar.sync 2, 128;" ::: "memory");
      if (tid == 0) {
        tw_tma_store_2d(&tw_tmap1, tw_smem_u32 + buf + 0, (int)(t83) + band + 0, (int)(t80));
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      }
      __syncwarp();
    }
    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  // 30:56  
}
