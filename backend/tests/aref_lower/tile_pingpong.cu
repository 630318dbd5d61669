// threads 384, dynamic shared memory 50176 bytes
// tw_tmap0: f16 over parameter 0, extents [Mul(Const(1), Param(5)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(6))] (elements), box [32, 64], swizzle 64B, L2 promotion 256B
// tw_tmap1: f16 over parameter 1, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(5))], strides [Mul(Const(1), Param(7))] (elements), box [64, 32], swizzle 128B, L2 promotion 256B
// tw_tmap2: f16 over parameter 2, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(8))] (elements), box [64, 64], swizzle 128B, L2 promotion 128B
// tw_tmap3: f16 over parameter 2, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(8))] (elements), box [64, 64], swizzle 128B, L2 promotion 128B
extern "C" __global__ void __launch_bounds__(384, 1) matmul_kernel(tw_f16* __restrict__ a_ptr_, tw_f16* __restrict__ b_ptr_, tw_f16* __restrict__ c_ptr_, int M_, int N_, int K_, int stride_am_, int stride_bk_, int stride_cm_, int tw_grid_x_, const __grid_constant__ tw_tmap tw_tmap0, const __grid_constant__ tw_tmap tw_tmap1, const __grid_constant__ tw_tmap tw_tmap2, const __grid_constant__ tw_tmap tw_tmap3) {
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap0) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap1) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap2) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap3) : "memory");
  }
  const int tid = threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int warp = __shfl_sync(0xffffffff, (int)(threadIdx.x >> 5), 0);
  (void)tid; (void)lane; (void)warp;
  const unsigned tw_smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
  (void)tw_smem_u32;
  unsigned char* const tw_smem = tw_smem_raw + 50176;
  // 47:5  
  // aref: 4 slots of 8192 bytes at 0, full/empty barriers at 32768/32800
  if (threadIdx.x == 0) {
  #pragma unroll
    for (int s = 0; s < 4; ++s) {
      tw_mbar_init(tw_smem_u32 + 32768 + 8 * s, 1);
      tw_mbar_init(tw_smem_u32 + 32800 + 8 * s, 4);
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
    int const aref_iter0_1 = (int)(0LL);
    // 49:13  
    long long const t2 = (long long)(1LL);
    long long const t3 = (long long)(M_);
    long long const t4 = (long long)((unsigned long long)t2 * (unsigned long long)t3);
    long long const t5 = (long long)(1LL);
    long long const t6 = (long long)(K_);
    long long const t7 = (long long)((unsigned long long)t5 * (unsigned long long)t6);
    long long const t8 = (long long)(1LL);
    long long const t9 = (long long)(stride_am_);
    long long const t10 = (long long)((unsigned long long)t8 * (unsigned long long)t9);
    long long const t11 = (long long)(1LL);
    tw_f16* const t12_base = (tw_f16*)(a_ptr_);
    long long const t12_shape0 = (long long)(t4);
    long long const t12_shape1 = (long long)(t7);
    long long const t12_stride0 = (long long)(t10);
    long long const t12_stride1 = (long long)(t11);
    // 50:13  
    long long const t13 = (long long)(1LL);
    long long const t14 = (long long)(K_);
    long long const t15 = (long long)((unsigned long long)t13 * (unsigned long long)t14);
    long long const t16 = (long long)(1LL);
    long long const t17 = (long long)(N_);
    long long const t18 = (long long)((unsigned long long)t16 * (unsigned long long)t17);
    long long const t19 = (long long)(1LL);
    long long const t20 = (long long)(stride_bk_);
    long long const t21 = (long long)((unsigned long long)t19 * (unsigned long long)t20);
    long long const t22 = (long long)(1LL);
    tw_f16* const t23_base = (tw_f16*)(b_ptr_);
    long long const t23_shape0 = (long long)(t15);
    long long const t23_shape1 = (long long)(t18);
    long long const t23_stride0 = (long long)(t21);
    long long const t23_stride1 = (long long)(t22);
    // 47:5  
    int const t24 = (int)blockIdx.x;
    int const t25 = (int)gridDim.x;
    int aref_iter_26;
    aref_iter_26 = aref_iter0_1;
    for (int tile_27 = t24; tile_27 < tw_grid_x_; tile_27 += t25) {
      // 29:26  
      int const t28 = (int)(63LL);
      int const t29 = (int)((unsigned)M_ + (unsigned)t28);
      int const t30 = (int)(64LL);
      int const tiles_m_31 = (t29 / t30);
      // 30:26  
      int const t32 = (int)(63LL);
      int const t33 = (int)((unsigned)N_ + (unsigned)t32);
      int const t34 = (int)(64LL);
      int const tiles_n_35 = (t33 / t34);
      // 31:23  
      int const t36 = (int)(8LL);
      int const tiles_per_group_37 = (int)((unsigned)t36 * (unsigned)tiles_n_35);
      // 32:13  
      int const group_38 = (tile_27 / tiles_per_group_37);
      // 33:23  
      int const t39 = (int)(8LL);
      int const first_m_40 = (int)((unsigned)group_38 * (unsigned)t39);
      // 34:22  
      int const t41 = (int)((unsigned)tiles_m_31 - (unsigned)first_m_40);
      int const t42 = (int)(8LL);
      int const group_rows_43 = (t41 < t42 ? t41 : t42);
      // 35:24  
      int const t44 = (tile_27 % tiles_per_group_37);
      int const t45 = (t44 % group_rows_43);
      // 36:13  
      int const t46 = (tile_27 % tiles_per_group_37);
      int const pid_n_47 = (t46 / group_rows_43);
      // 47:35  
      int const t48 = (int)(31LL);
      int const t49 = (int)((unsigned)K_ + (unsigned)t48);
      int const t50 = (int)(32LL);
      int const t51 = (t49 / t50);
      int const t52 = (int)(0LL);
      int const t53 = (int)(1LL);
      int aref_i_54;
      aref_i_54 = aref_iter_26;
      for (int kt_55 = t52; kt_55 < t51; kt_55 += t53) {
        // 49:13  
        long long const t56 = (long long)(512LL);
        long long const t57 = (long long)(group_38);
        long long const t58 = (long long)((unsigned long long)t56 * (unsigned long long)t57);
        long long const t59 = (long long)(64LL);
        long long const t60 = (long long)(t45);
        long long const t61 = (long long)((unsigned long long)t59 * (unsigned long long)t60);
        long long const t62 = (long long)((unsigned long long)t58 + (unsigned long long)t61);
        long long const t63 = (long long)(32LL);
        long long const t64 = (long long)(kt_55);
        long long const t65 = (long long)((unsigned long long)t63 * (unsigned long long)t64);
        // 50:13  
        long long const t66 = (long long)(32LL);
        long long const t67 = (long long)(kt_55);
        long long const t68 = (long long)((unsigned long long)t66 * (unsigned long long)t67);
        long long const t69 = (long long)(64LL);
        long long const t70 = (long long)(pid_n_47);
        long long const t71 = (long long)((unsigned long long)t69 * (unsigned long long)t70);
        const unsigned slot72 = (unsigned)(aref_i_54) % 4u, parity73 = ((unsigned)(aref_i_54) / 4u) & 1u;
        if (tid == 0) {
          tw_mbar_wait(tw_smem_u32 + 32800 + 8 * slot72, parity73 ^ 1u);
          tw_mbar_expect_tx(tw_smem_u32 + 32768 + 8 * slot72, 8192);
          tw_tma_2d(tw_smem_u32 + 0 + slot72 * 8192 + 0 + 0, &tw_tmap0, (int)(t65) + 0, (int)(t62), tw_smem_u32 + 32768 + 8 * slot72);
          tw_tma_2d(tw_smem_u32 + 0 + slot72 * 8192 + 4096 + 0, &tw_tmap1, (int)(t71) + 0, (int)(t68), tw_smem_u32 + 32768 + 8 * slot72);
        }
        int const t74 = (int)(1LL);
        int const t75 = (int)((unsigned)aref_i_54 + (unsigned)t74);
        int aref_i_76;
        aref_i_76 = t75;
        aref_i_54 = aref_i_76;
      }
      // 47:5  
      int aref_iter_77;
      aref_iter_77 = aref_i_54;
      aref_iter_26 = aref_iter_77;
    }
  } else if (threadIdx.x < 256) {
    // partition consumer0 (4 warps, from warp 4)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
    const int tid = threadIdx.x - 128;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // ping-pong: 2 partitions take turns at named barriers 4..5
    int const aref_iter0_1_78 = (int)(0LL);
    // 63:5  
    long long const t79 = (long long)(1LL);
    long long const t80 = (long long)(M_);
    long long const t81 = (long long)((unsigned long long)t79 * (unsigned long long)t80);
    long long const t82 = (long long)(1LL);
    long long const t83 = (long long)(N_);
    long long const t84 = (long long)((unsigned long long)t82 * (unsigned long long)t83);
    long long const t85 = (long long)(1LL);
    long long const t86 = (long long)(stride_cm_);
    long long const t87 = (long long)((unsigned long long)t85 * (unsigned long long)t86);
    long long const t88 = (long long)(1LL);
    tw_f16* const t89_base = (tw_f16*)(c_ptr_);
    long long const t89_shape0 = (long long)(t81);
    long long const t89_shape1 = (long long)(t84);
    long long const t89_stride0 = (long long)(t87);
    long long const t89_stride1 = (long long)(t88);
    // 47:5  
    int const t90 = (int)blockIdx.x;
    int const t91 = (int)gridDim.x;
    int const t92 = (int)(0LL);
    int const t93 = (int)(31LL);
    int const t94 = (int)((unsigned)K_ + (unsigned)t93);
    int const t95 = (int)(32LL);
    int const t96 = (t94 / t95);
    int const t97 = (int)(1LL);
    int const t98 = (int)(1LL);
    int const t99 = (int)(0LL);
    int const t100 = (int)((unsigned)t96 - (unsigned)t92);
    int const t101 = (int)((unsigned)t97 - (unsigned)t98);
    int const t102 = (int)((unsigned)t100 + (unsigned)t101);
    int const t103 = (t102 / t97);
    int const k_trips_104 = (t103 > t99 ? t103 : t99);
    int const t105 = (int)(2LL);
    int const pingpong_stride_106 = (int)((unsigned)t91 * (unsigned)t105);
    int aref_iter_1_107;
    aref_iter_1_107 = aref_iter0_1_78;
    for (int tile_1_108 = t90; tile_1_108 < tw_grid_x_; tile_1_108 += pingpong_stride_106) {
      // 29:26  
      int const t109 = (int)(63LL);
      int const t110 = (int)((unsigned)M_ + (unsigned)t109);
      int const t111 = (int)(64LL);
      int const tiles_m_1_112 = (t110 / t111);
      // 30:26  
      int const t113 = (int)(63LL);
      int const t114 = (int)((unsigned)N_ + (unsigned)t113);
      int const t115 = (int)(64LL);
      int const tiles_n_1_116 = (t114 / t115);
      // 31:23  
      int const t117 = (int)(8LL);
      int const tiles_per_group_1_118 = (int)((unsigned)t117 * (unsigned)tiles_n_1_116);
      // 32:13  
      int const group_1_119 = (tile_1_108 / tiles_per_group_1_118);
      // 33:23  
      int const t120 = (int)(8LL);
      int const first_m_1_121 = (int)((unsigned)group_1_119 * (unsigned)t120);
      // 34:22  
      int const t122 = (int)((unsigned)tiles_m_1_112 - (unsigned)first_m_1_121);
      int const t123 = (int)(8LL);
      int const group_rows_1_124 = (t122 < t123 ? t122 : t123);
      // 35:24  
      int const t125 = (tile_1_108 % tiles_per_group_1_118);
      int const t126 = (t125 % group_rows_1_124);
      // 36:13  
      int const t127 = (tile_1_108 % tiles_per_group_1_118);
      int const pid_n_1_128 = (t127 / group_rows_1_124);
      // 46:11  
      float acc_129[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_129[r] = 0.0f;
      // 47:35  
      int const t130 = (int)(31LL);
      int const t131 = (int)((unsigned)K_ + (unsigned)t130);
      int const t132 = (int)(32LL);
      int const t133 = (t131 / t132);
      int const t134 = (int)(0LL);
      int const t135 = (int)(1LL);
      asm volatile("bar.sync %0, 256;" :: "r"(4 + 0) : "memory");
      float acc_2_136[32];
      float acc_137[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_137[r] = 0.0f;
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_2_136[r] = acc_137[r];
      int aref_i_1_138;
      aref_i_1_138 = aref_iter_1_107;
      for (int kt_1_139 = t134; kt_1_139 < t133; kt_1_139 += t135) {
        // 49:13  
        const unsigned slot140 = (unsigned)(aref_i_1_138) % 4u, parity141 = ((unsigned)(aref_i_1_138) / 4u) & 1u;
        tw_mbar_wait(tw_smem_u32 + 32768 + 8 * slot140, parity141);
        // 51:15  
        // dot 64x64x32 (#mma<v3, warps = [4, 1], instr = 16x64>)
        float acc_3_142[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) acc_3_142[r] = acc_2_136[r];
        {
          const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
          const int gm_ = (warp / 4) % 1, gn_ = warp / 4;
          #pragma unroll
          for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_142[r]) :: "memory");
          asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
          #pragma unroll
          for (int ks = 0; ks < 2; ++ks) {
            const unsigned kb = ks * 32;
            const unsigned k0 = ks * 16;
            const unsigned long long da = tw_desc(smem_u32 + (0 + slot140 * 8192 + 0) + (0 + gm_ * 64) * 64, tw_lin(0, kb, 64, 64), 64);
            const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot140 * 8192 + 4096) + tw_lin(0, (0 + gn_ * 64) * 2, 32, 128), k0 * 128, 128, 32);
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}"
              : "+f"(acc_3_142[0]), "+f"(acc_3_142[1]), "+f"(acc_3_142[2]), "+f"(acc_3_142[3]), "+f"(acc_3_142[4]), "+f"(acc_3_142[5]), "+f"(acc_3_142[6]), "+f"(acc_3_142[7]), "+f"(acc_3_142[8]), "+f"(acc_3_142[9]), "+f"(acc_3_142[10]), "+f"(acc_3_142[11]), "+f"(acc_3_142[12]), "+f"(acc_3_142[13]), "+f"(acc_3_142[14]), "+f"(acc_3_142[15]), "+f"(acc_3_142[16]), "+f"(acc_3_142[17]), "+f"(acc_3_142[18]), "+f"(acc_3_142[19]), "+f"(acc_3_142[20]), "+f"(acc_3_142[21]), "+f"(acc_3_142[22]), "+f"(acc_3_142[23]), "+f"(acc_3_142[24]), "+f"(acc_3_142[25]), "+f"(acc_3_142[26]), "+f"(acc_3_142[27]), "+f"(acc_3_142[28]), "+f"(acc_3_142[29]), "+f"(acc_3_142[30]), "+f"(acc_3_142[31])
              : "l"(da), "l"(db));
          }
          asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
          asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
          #pragma unroll
          for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_142[r]) :: "memory");
        }
        const unsigned slot143 = (unsigned)(aref_i_1_138) % 4u, parity144 = ((unsigned)(aref_i_1_138) / 4u) & 1u;
        if (lane == 0) tw_mbar_arrive(tw_smem_u32 + 32800 + 8 * slot143);
        int const t145 = (int)(1LL);
        int const t146 = (int)((unsigned)aref_i_1_138 + (unsigned)t145);
        float acc_2_147[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) acc_2_147[r] = acc_3_142[r];
        int aref_i_1_148;
        aref_i_1_148 = t146;
        #pragma unroll
        for (int r = 0; r < (int)(sizeof(acc_2_136) / sizeof(acc_2_136[0])); ++r) acc_2_136[r] = acc_2_147[r];
        aref_i_1_138 = aref_i_1_148;
      }
      // 47:5  
      asm volatile("bar.arrive %0, 256;" :: "r"(4 + (0 + 1) % 2) : "memory");
      // 14:26  
      float const t149 = 0.0f;
      float t150[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t150[r] = t149;
      float t152[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t152[r] = t149;
      bool t151[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t151[r] = (acc_2_136[r] >= t152[r]);
      float const t153 = 0.01f;
      float t154[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t154[r] = t153;
      float t156[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t156[r] = t153;
      float t155[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t155[r] = (t156[r] * acc_2_136[r]);
      float acc_4_157[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_4_157[r] = (t151[r] ? acc_2_136[r] : t155[r]);
      // 57:9  
      tw_f16 c_158[32];
      #pragma unroll
      for (int r = 0; r < 32; r += 2) tw_f2h2(acc_4_157[r], acc_4_157[r + 1], c_158[r], c_158[r + 1]);
      // 63:5  
      long long const t159 = (long long)(512LL);
      long long const t160 = (long long)(group_1_119);
      long long const t161 = (long long)((unsigned long long)t159 * (unsigned long long)t160);
      long long const t162 = (long long)(64LL);
      long long const t163 = (long long)(t126);
      long long const t164 = (long long)((unsigned long long)t162 * (unsigned long long)t163);
      long long const t165 = (long long)((unsigned long long)t161 + (unsigned long long)t164);
      long long const t166 = (long long)(64LL);
      long long const t167 = (long long)(pid_n_1_128);
      long long const t168 = (long long)((unsigned long long)t166 * (unsigned long long)t167);
      // TMA store: boxes [64, 64] x1 for the tile, swizzle 128B, staged in 8192 bytes of shared memory (staging at byte 33792)
      {
        const int band = 0;
        const unsigned buf = 33792u;
        if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        asm volatile("bar.sync 2, 128;" ::: "memory");
        #pragma unroll
        for (int r = 0; r < 32; r += 2) {
          union { unsigned u; tw_f16 e[2]; } t;
          #pragma unroll
          for (int e = 0; e < 2; ++e) t.e[e] = c_158[r + e];
          *(unsigned*)(tw_smem_raw + buf + tw_swz((((lane / 4 % 8) + (warp % 4) * 16 + ((r / 2) % 2) * 8) & 63), (((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63)) - band) * 2, 64, 128)) = t.u;
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.sync 2, 128;" ::: "memory");
        if (tid == 0) {
          tw_tma_store_2d(&tw_tmap2, tw_smem_u32 + buf + 0, (int)(t168) + band + 0, (int)(t165));
          asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
        __syncwarp();
      }
      // 47:5  
      int const t169 = (int)((unsigned)aref_i_1_138 + (unsigned)k_trips_104);
      int aref_iter_1_170;
      aref_iter_1_170 = t169;
      aref_iter_1_107 = aref_iter_1_170;
    }
    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  } else {
    // partition consumer1 (4 warps, from warp 8)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
    const int tid = threadIdx.x - 256;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    unsigned char* const tw_smem = tw_smem_raw + 50176 + 1u * tw_scratch_stride;
    asm volatile("bar.arrive 4, 256;" ::: "memory");
    int const aref_iter0_1_1_171 = (int)(0LL);
    // 63:5  
    long long const t172 = (long long)(1LL);
    long long const t173 = (long long)(M_);
    long long const t174 = (long long)((unsigned long long)t172 * (unsigned long long)t173);
    long long const t175 = (long long)(1LL);
    long long const t176 = (long long)(N_);
    long long const t177 = (long long)((unsigned long long)t175 * (unsigned long long)t176);
    long long const t178 = (long long)(1LL);
    long long const t179 = (long long)(stride_cm_);
    long long const t180 = (long long)((unsigned long long)t178 * (unsigned long long)t179);
    long long const t181 = (long long)(1LL);
    tw_f16* const t182_base = (tw_f16*)(c_ptr_);
    long long const t182_shape0 = (long long)(t174);
    long long const t182_shape1 = (long long)(t177);
    long long const t182_stride0 = (long long)(t180);
    long long const t182_stride1 = (long long)(t181);
    // 47:5  
    int const t183 = (int)blockIdx.x;
    int const t184 = (int)gridDim.x;
    int const t185 = (int)(0LL);
    int const t186 = (int)(31LL);
    int const t187 = (int)((unsigned)K_ + (unsigned)t186);
    int const t188 = (int)(32LL);
    int const t189 = (t187 / t188);
    int const t190 = (int)(1LL);
    int const t191 = (int)(1LL);
    int const t192 = (int)(0LL);
    int const t193 = (int)((unsigned)t189 - (unsigned)t185);
    int const t194 = (int)((unsigned)t190 - (unsigned)t191);
    int const t195 = (int)((unsigned)t193 + (unsigned)t194);
    int const t196 = (t195 / t190);
    int const k_trips_1_197 = (t196 > t192 ? t196 : t192);
    int const t198 = (int)(2LL);
    int const pingpong_stride_1_199 = (int)((unsigned)t184 * (unsigned)t198);
    int const pingpong_first_200 = (int)((unsigned)t183 + (unsigned)t184);
    int const t201 = (int)((unsigned)aref_iter0_1_1_171 + (unsigned)k_trips_1_197);
    int aref_iter_1_1_202;
    aref_iter_1_1_202 = t201;
    for (int tile_1_1_203 = pingpong_first_200; tile_1_1_203 < tw_grid_x_; tile_1_1_203 += pingpong_stride_1_199) {
      // 29:26  
      int const t204 = (int)(63LL);
      int const t205 = (int)((unsigned)M_ + (unsigned)t204);
      int const t206 = (int)(64LL);
      int const tiles_m_1_1_207 = (t205 / t206);
      // 30:26  
      int const t208 = (int)(63LL);
      int const t209 = (int)((unsigned)N_ + (unsigned)t208);
      int const t210 = (int)(64LL);
      int const tiles_n_1_1_211 = (t209 / t210);
      // 31:23  
      int const t212 = (int)(8LL);
      int const tiles_per_group_1_1_213 = (int)((unsigned)t212 * (unsigned)tiles_n_1_1_211);
      // 32:13  
      int const group_1_1_214 = (tile_1_1_203 / tiles_per_group_1_1_213);
      // 33:23  
      int const t215 = (int)(8LL);
      int const first_m_1_1_216 = (int)((unsigned)group_1_1_214 * (unsigned)t215);
      // 34:22  
      int const t217 = (int)((unsigned)tiles_m_1_1_207 - (unsigned)first_m_1_1_216);
      int const t218 = (int)(8LL);
      int const group_rows_1_1_219 = (t217 < t218 ? t217 : t218);
      // 35:24  
      int const t220 = (tile_1_1_203 % tiles_per_group_1_1_213);
      int const t221 = (t220 % group_rows_1_1_219);
      // 36:13  
      int const t222 = (tile_1_1_203 % tiles_per_group_1_1_213);
      int const pid_n_1_1_223 = (t222 / group_rows_1_1_219);
      // 46:11  
      float acc_5_224[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_5_224[r] = 0.0f;
      // 47:35  
      int const t225 = (int)(31LL);
      int const t226 = (int)((unsigned)K_ + (unsigned)t225);
      int const t227 = (int)(32LL);
      int const t228 = (t226 / t227);
      int const t229 = (int)(0LL);
      int const t230 = (int)(1LL);
      asm volatile("bar.sync %0, 256;" :: "r"(4 + 1) : "memory");
      float acc_2_1_231[32];
      float acc_5_232[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_5_232[r] = 0.0f;
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_2_1_231[r] = acc_5_232[r];
      int aref_i_1_1_233;
      aref_i_1_1_233 = aref_iter_1_1_202;
      for (int kt_1_1_234 = t229; kt_1_1_234 < t228; kt_1_1_234 += t230) {
        // 49:13  
        const unsigned slot235 = (unsigned)(aref_i_1_1_233) % 4u, parity236 = ((unsigned)(aref_i_1_1_233) / 4u) & 1u;
        tw_mbar_wait(tw_smem_u32 + 32768 + 8 * slot235, parity236);
        // 51:15  
        // dot 64x64x32 (#mma<v3, warps = [4, 1], instr = 16x64>)
        float acc_3_1_237[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) acc_3_1_237[r] = acc_2_1_231[r];
        {
          const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
          const int gm_ = (warp / 4) % 1, gn_ = warp / 4;
          #pragma unroll
          for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_1_237[r]) :: "memory");
          asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
          #pragma unroll
          for (int ks = 0; ks < 2; ++ks) {
            const unsigned kb = ks * 32;
            const unsigned k0 = ks * 16;
            const unsigned long long da = tw_desc(smem_u32 + (0 + slot235 * 8192 + 0) + (0 + gm_ * 64) * 64, tw_lin(0, kb, 64, 64), 64);
            const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot235 * 8192 + 4096) + tw_lin(0, (0 + gn_ * 64) * 2, 32, 128), k0 * 128, 128, 32);
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}"
              : "+f"(acc_3_1_237[0]), "+f"(acc_3_1_237[1]), "+f"(acc_3_1_237[2]), "+f"(acc_3_1_237[3]), "+f"(acc_3_1_237[4]), "+f"(acc_3_1_237[5]), "+f"(acc_3_1_237[6]), "+f"(acc_3_1_237[7]), "+f"(acc_3_1_237[8]), "+f"(acc_3_1_237[9]), "+f"(acc_3_1_237[10]), "+f"(acc_3_1_237[11]), "+f"(acc_3_1_237[12]), "+f"(acc_3_1_237[13]), "+f"(acc_3_1_237[14]), "+f"(acc_3_1_237[15]), "+f"(acc_3_1_237[16]), "+f"(acc_3_1_237[17]), "+f"(acc_3_1_237[18]), "+f"(acc_3_1_237[19]), "+f"(acc_3_1_237[20]), "+f"(acc_3_1_237[21]), "+f"(acc_3_1_237[22]), "+f"(acc_3_1_237[23]), "+f"(acc_3_1_237[24]), "+f"(acc_3_1_237[25]), "+f"(acc_3_1_237[26]), "+f"(acc_3_1_237[27]), "+f"(acc_3_1_237[28]), "+f"(acc_3_1_237[29]), "+f"(acc_3_1_237[30]), "+f"(acc_3_1_237[31])
              : "l"(da), "l"(db));
          }
          asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
          asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
          #pragma unroll
          for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_1_237[r]) :: "memory");
        }
        const unsigned slot238 = (unsigned)(aref_i_1_1_233) % 4u, parity239 = ((unsigned)(aref_i_1_1_233) / 4u) & 1u;
        if (lane == 0) tw_mbar_arrive(tw_smem_u32 + 32800 + 8 * slot238);
        int const t240 = (int)(1LL);
        int const t241 = (int)((unsigned)aref_i_1_1_233 + (unsigned)t240);
        float acc_2_1_242[32];
        #pragma unroll
        for (int r = 0; r < 32; ++r) acc_2_1_242[r] = acc_3_1_237[r];
        int aref_i_1_1_243;
        aref_i_1_1_243 = t241;
        #pragma unroll
        for (int r = 0; r < (int)(sizeof(acc_2_1_231) / sizeof(acc_2_1_231[0])); ++r) acc_2_1_231[r] = acc_2_1_242[r];
        aref_i_1_1_233 = aref_i_1_1_243;
      }
      // 47:5  
      asm volatile("bar.arrive %0, 256;" :: "r"(4 + (1 + 1) % 2) : "memory");
      // 14:26  
      float const t244 = 0.0f;
      float t245[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t245[r] = t244;
      float t247[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t247[r] = t244;
      bool t246[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t246[r] = (acc_2_1_231[r] >= t247[r]);
      float const t248 = 0.01f;
      float t249[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t249[r] = t248;
      float t251[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t251[r] = t248;
      float t250[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t250[r] = (t251[r] * acc_2_1_231[r]);
      float acc_4_1_252[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_4_1_252[r] = (t246[r] ? acc_2_1_231[r] : t250[r]);
      // 57:9  
      tw_f16 c_1_253[32];
      #pragma unroll
      for (int r = 0; r < 32; r += 2) tw_f2h2(acc_4_1_252[r], acc_4_1_252[r + 1], c_1_253[r], c_1_253[r + 1]);
      // 63:5  
      long long const t254 = (long long)(512LL);
      long long const t255 = (long long)(group_1_1_214);
      long long const t256 = (long long)((unsigned long long)t254 * (unsigned long long)t255);
      long long const t257 = (long long)(64LL);
      long long const t258 = (long long)(t221);
      long long const t259 = (long long)((unsigned long long)t257 * (unsigned long long)t258);
      long long const t260 = (long long)((unsigned long long)t256 + (unsigned long long)t259);
      long long const t261 = (long long)(64LL);
      long long const t262 = (long long)(pid_n_1_1_223);
      long long const t263 = (long long)((unsigned long long)t261 * (unsigned long long)t262);
      // TMA store: boxes [64, 64] x1 for the tile, swizzle 128B, staged in 8192 bytes of shared memory (staging at byte 41984)
      {
        const int band = 0;
        const unsigned buf = 41984u;
        if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        asm volatile("bar.sync 3, 128;" ::: "memory");
        #pragma unroll
        for (int r = 0; r < 32; r += 2) {
          union { unsigned u; tw_f16 e[2]; } t;
          #pragma unroll
          for (int e = 0; e < 2; ++e) t.e[e] = c_1_253[r + e];
          *(unsigned*)(tw_smem_raw + buf + tw_swz((((lane / 4 % 8) + (warp % 4) * 16 + ((r / 2) % 2) * 8) & 63), (((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63)) - band) * 2, 64, 128)) = t.u;
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.sync 3, 128;" ::: "memory");
        if (tid == 0) {
          tw_tma_store_2d(&tw_tmap3, tw_smem_u32 + buf + 0, (int)(t263) + band + 0, (int)(t260));
          asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
        __syncwarp();
      }
      // 47:5  
      int const t264 = (int)((unsigned)aref_i_1_1_233 + (unsigned)k_trips_1_197);
      int aref_iter_1_1_265;
      aref_iter_1_1_265 = t264;
      aref_iter_1_1_202 = aref_iter_1_1_265;
    }
    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  // 63:36  
}
