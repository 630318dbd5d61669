// threads 384, dynamic shared memory 133120 bytes
// tw_tmap0: f16 over parameter 0, extents [Mul(Const(1), Param(5)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(5))] (elements), box [64, 128], swizzle 128B, L2 promotion 256B
// tw_tmap1: f16 over parameter 1, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(5))], strides [Mul(Const(1), Param(4))] (elements), box [64, 64], swizzle 128B, L2 promotion 256B
extern "C" __global__ void __launch_bounds__(384, 1) tw_k_gemm(tw_f16* __restrict__ a_ptr_, tw_f16* __restrict__ b_ptr_, float* __restrict__ c_ptr_, int M_, int N_, int K_, const __grid_constant__ tw_tmap tw_tmap0, const __grid_constant__ tw_tmap tw_tmap1) {
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
  unsigned char* const tw_smem = tw_smem_raw + 99328;
  // 14:5  
  // aref: 3 slots of 32768 bytes at 0, full/empty barriers at 98304/98328
  if (threadIdx.x == 0) {
  #pragma unroll
    for (int s = 0; s < 3; ++s) {
      tw_mbar_init(tw_smem_u32 + 98304 + 8 * s, 1);
      tw_mbar_init(tw_smem_u32 + 98328 + 8 * s, 8);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    // partition producer (4 warps, from warp 0)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;" ::: "memory");
    const int tid = threadIdx.x - 0;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // 15:13  
    long long const t1 = (long long)(1LL);
    long long const t2 = (long long)(M_);
    long long const t3 = (long long)((unsigned long long)t1 * (unsigned long long)t2);
    long long const t4 = (long long)(1LL);
    long long const t5 = (long long)(K_);
    long long const t6 = (long long)((unsigned long long)t4 * (unsigned long long)t5);
    long long const t7 = (long long)(1LL);
    long long const t8 = (long long)(K_);
    long long const t9 = (long long)((unsigned long long)t7 * (unsigned long long)t8);
    long long const t10 = (long long)(1LL);
    tw_f16* const t11_base = (tw_f16*)(a_ptr_);
    long long const t11_shape0 = (long long)(t3);
    long long const t11_shape1 = (long long)(t6);
    long long const t11_stride0 = (long long)(t9);
    long long const t11_stride1 = (long long)(t10);
    // 17:13  
    long long const t12 = (long long)(1LL);
    long long const t13 = (long long)(K_);
    long long const t14 = (long long)((unsigned long long)t12 * (unsigned long long)t13);
    long long const t15 = (long long)(1LL);
    long long const t16 = (long long)(N_);
    long long const t17 = (long long)((unsigned long long)t15 * (unsigned long long)t16);
    long long const t18 = (long long)(1LL);
    long long const t19 = (long long)(N_);
    long long const t20 = (long long)((unsigned long long)t18 * (unsigned long long)t19);
    long long const t21 = (long long)(1LL);
    tw_f16* const t22_base = (tw_f16*)(b_ptr_);
    long long const t22_shape0 = (long long)(t14);
    long long const t22_shape1 = (long long)(t17);
    long long const t22_stride0 = (long long)(t20);
    long long const t22_stride1 = (long long)(t21);
    // 8:13  
    int const pid_m_23 = (int)blockIdx.x;
    // 9:13  
    int const pid_n_24 = (int)blockIdx.y;
    // 14:34  
    int const t25 = (int)(63LL);
    int const t26 = (int)((unsigned)K_ + (unsigned)t25);
    int const t27 = (int)(64LL);
    int const t28 = (t26 / t27);
    int const t29 = (int)(0LL);
    int const t30 = (int)(1LL);
    for (int k_31 = t29; k_31 < t28; k_31 += t30) {
      // 15:13  
      long long const t32 = (long long)(128LL);
      long long const t33 = (long long)(pid_m_23);
      long long const t34 = (long long)((unsigned long long)t32 * (unsigned long long)t33);
      long long const t35 = (long long)(64LL);
      long long const t36 = (long long)(k_31);
      long long const t37 = (long long)((unsigned long long)t35 * (unsigned long long)t36);
      // 17:13  
      long long const t38 = (long long)(64LL);
      long long const t39 = (long long)(k_31);
      long long const t40 = (long long)((unsigned long long)t38 * (unsigned long long)t39);
      long long const t41 = (long long)(128LL);
      long long const t42 = (long long)(pid_n_24);
      long long const t43 = (long long)((unsigned long long)t41 * (unsigned long long)t42);
      const unsigned slot44 = (unsigned)(k_31) % 3u, parity45 = ((unsigned)(k_31) / 3u) & 1u;
      if (tid == 0) {
        tw_mbar_wait(tw_smem_u32 + 98328 + 8 * slot44, parity45 ^ 1u);
        tw_mbar_expect_tx(tw_smem_u32 + 98304 + 8 * slot44, 32768);
        tw_tma_2d(tw_smem_u32 + 0 + slot44 * 32768 + 0 + 0, &tw_tmap0, (int)(t37) + 0, (int)(t34), tw_smem_u32 + 98304 + 8 * slot44);
        tw_tma_2d(tw_smem_u32 + 0 + slot44 * 32768 + 16384 + 0, &tw_tmap1, (int)(t43) + 0, (int)(t40), tw_smem_u32 + 98304 + 8 * slot44);
        tw_tma_2d(tw_smem_u32 + 0 + slot44 * 32768 + 16384 + 8192, &tw_tmap1, (int)(t43) + 64, (int)(t40), tw_smem_u32 + 98304 + 8 * slot44);
      }
    }
  } else {
    // partition consumer (8 warps, from warp 4)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
    const int tid = threadIdx.x - 128;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // 8:13  
    int const pid_m_1_46 = (int)blockIdx.x;
    // 9:13  
    int const pid_n_1_47 = (int)blockIdx.y;
    // 10:18  
    int const t48 = (int)(128LL);
    int const t49 = (int)((unsigned)pid_m_1_46 * (unsigned)t48);
    int t50[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t50[r] = 0 + (((lane % 32) + (warp % 8) * 32 + 0) & 127);
    int t51[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t51[r] = t49;
    int rm_52[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) rm_52[r] = (int)((unsigned)t51[r] + (unsigned)t50[r]);
    // 11:18  
    int const t53 = (int)(128LL);
    int const t54 = (int)((unsigned)pid_n_1_47 * (unsigned)t53);
    int t55[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t55[r] = 0 + (((lane % 32) + (warp % 8) * 32 + 0) & 127);
    int t56[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t56[r] = t54;
    int rn_57[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) rn_57[r] = (int)((unsigned)t56[r] + (unsigned)t55[r]);
    // 13:11  
    float acc_58[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) acc_58[r] = 0.0f;
    // 14:34  
    int const t59 = (int)(63LL);
    int const t60 = (int)((unsigned)K_ + (unsigned)t59);
    int const t61 = (int)(64LL);
    int const t62 = (t60 / t61);
    int const t63 = (int)(0LL);
    int const t64 = (int)(1LL);
    float acc_2_65[64];
    float acc_66[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) acc_66[r] = 0.0f;
    #pragma unroll
    for (int r = 0; r < 64; ++r) acc_2_65[r] = acc_66[r];
    for (int k_1_67 = t63; k_1_67 < t62; k_1_67 += t64) {
      // 15:13  
      const unsigned slot68 = (unsigned)(k_1_67) % 3u, parity69 = ((unsigned)(k_1_67) / 3u) & 1u;
      tw_mbar_wait(tw_smem_u32 + 98304 + 8 * slot68, parity69);
      // 19:15  
      // dot 128x128x64 (#mma<v3, warps = [8, 1], instr = 16x128>)
      float acc_3_70[64];
      #pragma unroll
      for (int r = 0; r < 64; ++r) acc_3_70[r] = acc_2_65[r];
      {
        const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
        const int gm_ = (warp / 4) % 2, gn_ = warp / 8;
        #pragma unroll
        for (int r = 0; r < 64; ++r) asm volatile("" : "+f"(acc_3_70[r]) :: "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        #pragma unroll
        for (int ks = 0; ks < 4; ++ks) {
          const unsigned kb = ks * 32;
          const unsigned k0 = ks * 16;
          const unsigned long long da = tw_desc(smem_u32 + (0 + slot68 * 32768 + 0) + (0 + gm_ * 64) * 128, tw_lin(0, kb, 128, 128), 128);
          const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot68 * 32768 + 16384) + tw_lin(0, (0 + gn_ * 128) * 2, 64, 128), k0 * 128, 128, 64);
          asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 1;\n}"
            : "+f"(acc_3_70[0]), "+f"(acc_3_70[1]), "+f"(acc_3_70[2]), "+f"(acc_3_70[3]), "+f"(acc_3_70[4]), "+f"(acc_3_70[5]), "+f"(acc_3_70[6]), "+f"(acc_3_70[7]), "+f"(acc_3_70[8]), "+f"(acc_3_70[9]), "+f"(acc_3_70[10]), "+f"(acc_3_70[11]), "+f"(acc_3_70[12]), "+f"(acc_3_70[13]), "+f"(acc_3_70[14]), "+f"(acc_3_70[15]), "+f"(acc_3_70[16]), "+f"(acc_3_70[17]), "+f"(acc_3_70[18]), "+f"(acc_3_70[19]), "+f"(acc_3_70[20]), "+f"(acc_3_70[21]), "+f"(acc_3_70[22]), "+f"(acc_3_70[23]), "+f"(acc_3_70[24]), "+f"(acc_3_70[25]), "+f"(acc_3_70[26]), "+f"(acc_3_70[27]), "+f"(acc_3_70[28]), "+f"(acc_3_70[29]), "+f"(acc_3_70[30]), "+f"(acc_3_70[31]), "+f"(acc_3_70[32]), "+f"(acc_3_70[33]), "+f"(acc_3_70[34]), "+f"(acc_3_70[35]), "+f"(acc_3_70[36]), "+f"(acc_3_70[37]), "+f"(acc_3_70[38]), "+f"(acc_3_70[39]), "+f"(acc_3_70[40]), "+f"(acc_3_70[41]), "+f"(acc_3_70[42]), "+f"(acc_3_70[43]), "+f"(acc_3_70[44]), "+f"(acc_3_70[45]), "+f"(acc_3_70[46]), "+f"(acc_3_70[47]), "+f"(acc_3_70[48]), "+f"(acc_3_70[49]), "+f"(acc_3_70[50]), "+f"(acc_3_70[51]), "+f"(acc_3_70[52]), "+f"(acc_3_70[53]), "+f"(acc_3_70[54]), "+f"(acc_3_70[55]), "+f"(acc_3_70[56]), "+f"(acc_3_70[57]), "+f"(acc_3_70[58]), "+f"(acc_3_70[59]), "+f"(acc_3_70[60]), "+f"(acc_3_70[61]), "+f"(acc_3_70[62]), "+f"(acc_3_70[63])
            : "l"(da), "l"(db));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        #pragma unroll
        for (int r = 0; r < 64; ++r) asm volatile("" : "+f"(acc_3_70[r]) :: "memory");
      }
      const unsigned slot71 = (unsigned)(k_1_67) % 3u, parity72 = ((unsigned)(k_1_67) / 3u) & 1u;
      if (lane == 0) tw_mbar_arrive(tw_smem_u32 + 98328 + 8 * slot71);
      float acc_2_73[64];
      #pragma unroll
      for (int r = 0; r < 64; ++r) acc_2_73[r] = acc_3_70[r];
      #pragma unroll
      for (int r = 0; r < (int)(sizeof(acc_2_65) / sizeof(acc_2_65[0])); ++r) acc_2_65[r] = acc_2_73[r];
    }
    // 20:22  
    int t76[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t76[r] = t49;
    int t77[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t77[r] = 0 + (((lane % 32) + (warp % 8) * 32 + 0) & 127);
    int rm_75[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) rm_75[r] = (int)((unsigned)t76[r] + (unsigned)t77[r]);
    int t74[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t74[r] = rm_75[0];
    int t78[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t78[r] = N_;
    int t79[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t79[r] = (int)((unsigned)t74[r] * (unsigned)t78[r]);
    float* t80[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t80[r] = c_ptr_;
    float* t81[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t81[r] = t80[r] + t79[r];
    int t84[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t84[r] = t54;
    int t85[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t85[r] = 0 + (((lane % 32) + (warp % 4) * 32 + 0) & 127);
    int rn_83[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) rn_83[r] = (int)((unsigned)t84[r] + (unsigned)t85[r]);
    int t82[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t82[r] = rn_83[0];
    float* t86[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t86[r] = t81[0];
    int t87[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t87[r] = t82[0];
    int t92[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t92[r] = t54;
    int t93[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t93[r] = 0 + ((0 + ((r / 1) % 128) * 1) & 127);
    int rn_91[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) rn_91[r] = (int)((unsigned)t92[r] + (unsigned)t93[r]);
    int t90[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t90[r] = rn_91[((r / 1) % 128) * 1];
    int t89[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t89[r] = t90[((r / 1) % 128) * 1];
    float* t88[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t88[r] = t86[r] + t89[r];
    // 21:20  
    int t94[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t94[r] = rm_75[0];
    int t95[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t95[r] = M_;
    bool t96[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t96[r] = (t94[r] < t95[r]);
    int t97[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t97[r] = rn_83[0];
    int t98[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t98[r] = N_;
    bool t99[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t99[r] = (t97[r] < t98[r]);
    bool t100[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t100[r] = t96[0];
    bool t101[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t101[r] = t99[0];
    int t105[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t105[r] = rn_91[((r / 1) % 128) * 1];
    int t106[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t106[r] = N_;
    bool t104[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t104[r] = (t105[r] < t106[r]);
    bool t103[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t103[r] = t104[((r / 1) % 128) * 1];
    bool t102[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) t102[r] = (t100[r] & t103[r]);
    // 20:5  
    float* t110[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t110[r] = c_ptr_;
    int t114[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t114[r] = t49;
    int t115[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) t115[r] = 0 + (((warp % 8) + ((r / 1) % 16) * 8) & 127);
    int rm_113[16];
    #pragma unroll
    for (int r = 0; r < 16; ++r) rm_113[r] = (int)((unsigned)t114[r] + (unsigned)t115[r]);
    int t112[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t112[r] = rm_113[((r / 4) % 16) * 1];
    int t116[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t116[r] = N_;
    int t111[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t111[r] = (int)((unsigned)t112[r] * (unsigned)t116[r]);
    float* t109[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t109[r] = t110[r] + t111[r];
    float* t108[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t108[r] = t109[((r / 4) % 16) * 4];
    int t120[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t120[r] = t54;
    int t121[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t121[r] = 0 + (((lane % 32) * 4 + ((r / 1) % 4) * 1) & 127);
    int rn_119[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) rn_119[r] = (int)((unsigned)t120[r] + (unsigned)t121[r]);
    int t118[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t118[r] = rn_119[((r / 1) % 4) * 1];
    int t117[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t117[r] = t118[((r / 1) % 4) * 1];
    float* t107[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t107[r] = t108[r] + t117[r];
    int t125[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t125[r] = rm_113[((r / 4) % 16) * 1];
    int t126[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t126[r] = M_;
    bool t124[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t124[r] = (t125[r] < t126[r]);
    bool t123[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t123[r] = t124[((r / 4) % 16) * 4];
    int t129[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t129[r] = rn_119[((r / 1) % 4) * 1];
    int t130[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t130[r] = N_;
    bool t128[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t128[r] = (t129[r] < t130[r]);
    bool t127[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t127[r] = t128[((r / 1) % 4) * 1];
    bool t122[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t122[r] = (t123[r] & t127[r]);
    #pragma unroll 1
    for (int band = 0; band < 128; band += 64) {
      // #mma<v3, warps = [8, 1], instr = 16x128> -> #blocked<spt = [1, 4], tpw = [1, 32], wpc = [8, 1], order = [1, 0]> through shared memory (2- and 4-element vectors, padded rows)
      asm volatile("bar.sync 2, 256;" ::: "memory");
      #pragma unroll
      for (int r = 0; r < 64; r += 2) {
        union { uint2 u; float e[2]; } t;
        #pragma unroll
        for (int e = 0; e < 2; ++e) t.e[e] = acc_2_65[r + e];
        if ((unsigned)(((((lane / 4 % 8) + (warp % 8) * 16 + ((r / 2) % 2) * 8) & 127)) - band) < 64u) *(uint2*)((float*)tw_smem + ((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 16) * 8) & 127)) + (((((lane / 4 % 8) + (warp % 8) * 16 + ((r / 2) % 2) * 8) & 127)) - band) * 132) = t.u;
      }
      asm volatile("bar.sync 2, 256;" ::: "memory");
      #pragma unroll
      for (int g = 0; g < 16; ++g) {
        union { uint4 u; float e[4]; } t;
        if ((unsigned)(((((warp % 8) + ((g * 4 / 4) % 16) * 8) & 127)) - band) < 64u && t122[g * 4]) { t.u = *(uint4*)((float*)tw_smem + ((((lane % 32) * 4 + ((g * 4 / 1) % 4) * 1) & 127)) + (((((warp % 8) + ((g * 4 / 4) % 16) * 8) & 127)) - band) * 132); *(uint4*)(t107[g * 4]) = t.u; }
      }
    }
  }
  // 21:56  
}
