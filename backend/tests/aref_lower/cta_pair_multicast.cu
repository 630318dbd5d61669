// threads 256, dynamic shared memory 41984 bytes
// thread-block clusters [2, 1, 1]
// tw_tmap0: f16 over parameter 0, extents [Mul(Const(1), Param(5)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(6))] (elements), box [32, 64], swizzle 64B, L2 promotion 256B
// tw_tmap1: f16 over parameter 0, extents [Mul(Const(1), Param(5)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(6))] (elements), box [32, 32], swizzle 64B, L2 promotion 256B
// tw_tmap2: f16 over parameter 1, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(5))], strides [Mul(Const(1), Param(7))] (elements), box [64, 32], swizzle 128B, L2 promotion 256B
// tw_tmap3: f16 over parameter 1, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(5))], strides [Mul(Const(1), Param(7))] (elements), box [64, 16], swizzle 128B, L2 promotion 256B
// tw_tmap4: f16 over parameter 2, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(8))] (elements), box [64, 64], swizzle 128B, L2 promotion 128B
extern "C" __global__ void __launch_bounds__(256, 1) matmul_kernel(tw_f16* __restrict__ a_ptr_, tw_f16* __restrict__ b_ptr_, tw_f16* __restrict__ c_ptr_, int M_, int N_, int K_, int stride_am_, int stride_bk_, int stride_cm_, int tw_grid_x_, const __grid_constant__ tw_tmap tw_tmap0, const __grid_constant__ tw_tmap tw_tmap1, const __grid_constant__ tw_tmap tw_tmap2, const __grid_constant__ tw_tmap tw_tmap3, const __grid_constant__ tw_tmap tw_tmap4) {
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap0) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap1) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap2) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap3) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tw_tmap4) : "memory");
  }
  const int tid = threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int warp = __shfl_sync(0xffffffff, (int)(threadIdx.x >> 5), 0);
  (void)tid; (void)lane; (void)warp;
  const unsigned tw_smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
  (void)tw_smem_u32;
  unsigned char* const tw_smem = tw_smem_raw + 41984;
  // 47:5  
  // aref: 4 slots of 8192 bytes at 0, full/empty barriers at 32768/32800
  if (threadIdx.x == 0) {
  #pragma unroll
    for (int s = 0; s < 4; ++s) {
      tw_mbar_init(tw_smem_u32 + 32768 + 8 * s, 1);
      tw_mbar_init(tw_smem_u32 + 32800 + 8 * s, 8);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  tw_cluster_sync();
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
      int const t28 = (int)(1LL);
      int const peer_tile_29 = (tile_27 ^ t28);
      bool const peer_has_tile_30 = (peer_tile_29 < tw_grid_x_);
      // 29:26  
      int const t31 = (int)(63LL);
      int const t32 = (int)((unsigned)M_ + (unsigned)t31);
      int const t33 = (int)(64LL);
      int const tiles_m_34 = (t32 / t33);
      // 30:26  
      int const t35 = (int)(63LL);
      int const t36 = (int)((unsigned)N_ + (unsigned)t35);
      int const t37 = (int)(64LL);
      int const tiles_n_38 = (t36 / t37);
      // 31:23  
      int const t39 = (int)(8LL);
      int const tiles_per_group_40 = (int)((unsigned)t39 * (unsigned)tiles_n_38);
      // 32:13  
      int const group_41 = (tile_27 / tiles_per_group_40);
      int const t42 = (peer_tile_29 / tiles_per_group_40);
      // 33:23  
      int const t43 = (int)(8LL);
      int const first_m_44 = (int)((unsigned)group_41 * (unsigned)t43);
      int const t45 = (int)((unsigned)t42 * (unsigned)t43);
      // 34:22  
      int const t46 = (int)((unsigned)tiles_m_34 - (unsigned)first_m_44);
      int const t47 = (int)((unsigned)tiles_m_34 - (unsigned)t45);
      int const t48 = (int)(8LL);
      int const group_rows_49 = (t46 < t48 ? t46 : t48);
      int const t50 = (t47 < t48 ? t47 : t48);
      // 35:24  
      int const t51 = (tile_27 % tiles_per_group_40);
      int const t52 = (peer_tile_29 % tiles_per_group_40);
      int const t53 = (t51 % group_rows_49);
      int const t54 = (t52 % t50);
      // 36:13  
      int const t55 = (tile_27 % tiles_per_group_40);
      int const t56 = (peer_tile_29 % tiles_per_group_40);
      int const pid_n_57 = (t55 / group_rows_49);
      int const t58 = (t56 / t50);
      // 47:35  
      int const t59 = (int)(31LL);
      int const t60 = (int)((unsigned)K_ + (unsigned)t59);
      int const t61 = (int)(32LL);
      int const t62 = (t60 / t61);
      int const t63 = (int)(0LL);
      int const t64 = (int)(1LL);
      int aref_i_65;
      aref_i_65 = aref_iter_26;
      for (int kt_66 = t63; kt_66 < t62; kt_66 += t64) {
        // 49:13  
        long long const t67 = (long long)(512LL);
        long long const t68 = (long long)(group_41);
        long long const t69 = (long long)(t42);
        long long const t70 = (long long)((unsigned long long)t67 * (unsigned long long)t68);
        long long const t71 = (long long)((unsigned long long)t67 * (unsigned long long)t69);
        long long const t72 = (long long)(64LL);
        long long const t73 = (long long)(t53);
        long long const t74 = (long long)(t54);
        long long const t75 = (long long)((unsigned long long)t72 * (unsigned long long)t73);
        long long const t76 = (long long)((unsigned long long)t72 * (unsigned long long)t74);
        long long const t77 = (long long)((unsigned long long)t70 + (unsigned long long)t75);
        long long const t78 = (long long)((unsigned long long)t71 + (unsigned long long)t76);
        long long const t79 = (long long)(32LL);
        long long const t80 = (long long)(kt_66);
        long long const t81 = (long long)((unsigned long long)t79 * (unsigned long long)t80);
        // 50:13  
        long long const t82 = (long long)(32LL);
        long long const t83 = (long long)(kt_66);
        long long const t84 = (long long)((unsigned long long)t82 * (unsigned long long)t83);
        long long const t85 = (long long)(64LL);
        long long const t86 = (long long)(pid_n_57);
        long long const t87 = (long long)(t58);
        long long const t88 = (long long)((unsigned long long)t85 * (unsigned long long)t86);
        long long const t89 = (long long)((unsigned long long)t85 * (unsigned long long)t87);
        bool const t90 = (t77 == t78);
        bool const t91 = (peer_has_tile_30 & t90);
        bool const t92 = (t88 == t89);
        bool const t93 = (peer_has_tile_30 & t92);
        const unsigned slot94 = (unsigned)(aref_i_65) % 4u, parity95 = ((unsigned)(aref_i_65) / 4u) & 1u;
        if (tid == 0) {
          tw_mbar_wait(tw_smem_u32 + 32800 + 8 * slot94, parity95 ^ 1u);
          tw_mbar_expect_tx(tw_smem_u32 + 32768 + 8 * slot94, 8192);
          if (t91) {
            tw_tma_2d_multicast(tw_smem_u32 + 0 + slot94 * 8192 + 0 + 0 + tw_cta_rank() * 2048u, &tw_tmap1, (int)(t81) + 0, (int)(t77) + (int)tw_cta_rank() * 32, tw_smem_u32 + 32768 + 8 * slot94, (unsigned short)3);
          } else {
            tw_tma_2d(tw_smem_u32 + 0 + slot94 * 8192 + 0 + 0, &tw_tmap0, (int)(t81) + 0, (int)(t77), tw_smem_u32 + 32768 + 8 * slot94);
          }
          if (t93) {
            tw_tma_2d_multicast(tw_smem_u32 + 0 + slot94 * 8192 + 4096 + 0 + tw_cta_rank() * 2048u, &tw_tmap3, (int)(t88) + 0, (int)(t84) + (int)tw_cta_rank() * 16, tw_smem_u32 + 32768 + 8 * slot94, (unsigned short)3);
          } else {
            tw_tma_2d(tw_smem_u32 + 0 + slot94 * 8192 + 4096 + 0, &tw_tmap2, (int)(t88) + 0, (int)(t84), tw_smem_u32 + 32768 + 8 * slot94);
          }
        }
        int const t96 = (int)(1LL);
        int const t97 = (int)((unsigned)aref_i_65 + (unsigned)t96);
        int aref_i_98;
        aref_i_98 = t97;
        aref_i_65 = aref_i_98;
      }
      // 47:5  
      int aref_iter_99;
      aref_iter_99 = aref_i_65;
      aref_iter_26 = aref_iter_99;
    }
  } else {
    // partition consumer (4 warps, from warp 4)
    const int tid = threadIdx.x - 128;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    int const aref_iter0_1_100 = (int)(0LL);
    // 63:5  
    long long const t101 = (long long)(1LL);
    long long const t102 = (long long)(M_);
    long long const t103 = (long long)((unsigned long long)t101 * (unsigned long long)t102);
    long long const t104 = (long long)(1LL);
    long long const t105 = (long long)(N_);
    long long const t106 = (long long)((unsigned long long)t104 * (unsigned long long)t105);
    long long const t107 = (long long)(1LL);
    long long const t108 = (long long)(stride_cm_);
    long long const t109 = (long long)((unsigned long long)t107 * (unsigned long long)t108);
    long long const t110 = (long long)(1LL);
    tw_f16* const t111_base = (tw_f16*)(c_ptr_);
    long long const t111_shape0 = (long long)(t103);
    long long const t111_shape1 = (long long)(t106);
    long long const t111_stride0 = (long long)(t109);
    long long const t111_stride1 = (long long)(t110);
    // 47:5  
    int const t112 = (int)blockIdx.x;
    int const t113 = (int)gridDim.x;
    int aref_iter_1_114;
    aref_iter_1_114 = aref_iter0_1_100;
    for (int tile_1_115 = t112; tile_1_115 < tw_grid_x_; tile_1_115 += t113) {
      int const t116 = (int)(1LL);
      int const peer_tile_1_117 = (tile_1_115 ^ t116);
      bool const peer_has_tile_1_118 = (peer_tile_1_117 < tw_grid_x_);
      // 29:26  
      int const t119 = (int)(63LL);
      int const t120 = (int)((unsigned)M_ + (unsigned)t119);
      int const t121 = (int)(64LL);
      int const tiles_m_1_122 = (t120 / t121);
      // 30:26  
      int const t123 = (int)(63LL);
      int const t124 = (int)((unsigned)N_ + (unsigned)t123);
      int const t125 = (int)(64LL);
      int const tiles_n_1_126 = (t124 / t125);
      // 31:23  
      int const t127 = (int)(8LL);
      int const tiles_per_group_1_128 = (int)((unsigned)t127 * (unsigned)tiles_n_1_126);
      // 32:13  
      int const group_1_129 = (tile_1_115 / tiles_per_group_1_128);
      // 33:23  
      int const t130 = (int)(8LL);
      int const first_m_1_131 = (int)((unsigned)group_1_129 * (unsigned)t130);
      // 34:22  
      int const t132 = (int)((unsigned)tiles_m_1_122 - (unsigned)first_m_1_131);
      int const t133 = (int)(8LL);
      int const group_rows_1_134 = (t132 < t133 ? t132 : t133);
      // 35:24  
      int const t135 = (tile_1_115 % tiles_per_group_1_128);
      int const t136 = (t135 % group_rows_1_134);
      // 36:13  
      int const t137 = (tile_1_115 % tiles_per_group_1_128);
      int const pid_n_1_138 = (t137 / group_rows_1_134);
      // 46:11  
      float acc_139[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_139[r] = 0.0f;
      // 47:35  
      int const t140 = (int)(31LL);
      int const t141 = (int)((unsigned)K_ + (unsigned)t140);
      int const t142 = (int)(32LL);
      int const t143 = (t141 / t142);
      int const t144 = (int)(0LL);
      int const t145 = (int)(1LL);
      // 51:15  
      int const t146 = (int)(-1LL);
      // 47:5  
      float acc_2_147[32];
      float acc_148[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_148[r] = 0.0f;
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_2_147[r] = acc_148[r];
      int aref_i_1_149;
      aref_i_1_149 = aref_iter_1_114;
      int held1_150;
      held1_150 = t146;
      if (t144 < t143) {
        for (int kt_1_151 = t144; kt_1_151 < t143; kt_1_151 += t145) {
          // 49:13  
          const unsigned slot152 = (unsigned)(aref_i_1_149) % 4u, parity153 = ((unsigned)(aref_i_1_149) / 4u) & 1u;
          tw_mbar_wait(tw_smem_u32 + 32768 + 8 * slot152, parity153);
          // 51:15  
          // dot 64x64x32 (#mma<v3, warps = [4, 1], instr = 16x64>)
          float acc_3_154[32];
          #pragma unroll
          for (int r = 0; r < 32; ++r) acc_3_154[r] = acc_2_147[r];
          {
            const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
            const int gm_ = (warp / 4) % 1, gn_ = warp / 4;
            #pragma unroll
            for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_154[r]) :: "memory");
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
            #pragma unroll
            for (int ks = 0; ks < 2; ++ks) {
              const unsigned kb = ks * 32;
              const unsigned k0 = ks * 16;
              const unsigned long long da = tw_desc(smem_u32 + (0 + slot152 * 8192 + 0) + (0 + gm_ * 64) * 64, tw_lin(0, kb, 64, 64), 64);
              const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot152 * 8192 + 4096) + tw_lin(0, (0 + gn_ * 64) * 2, 32, 128), k0 * 128, 128, 32);
              asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}"
                : "+f"(acc_3_154[0]), "+f"(acc_3_154[1]), "+f"(acc_3_154[2]), "+f"(acc_3_154[3]), "+f"(acc_3_154[4]), "+f"(acc_3_154[5]), "+f"(acc_3_154[6]), "+f"(acc_3_154[7]), "+f"(acc_3_154[8]), "+f"(acc_3_154[9]), "+f"(acc_3_154[10]), "+f"(acc_3_154[11]), "+f"(acc_3_154[12]), "+f"(acc_3_154[13]), "+f"(acc_3_154[14]), "+f"(acc_3_154[15]), "+f"(acc_3_154[16]), "+f"(acc_3_154[17]), "+f"(acc_3_154[18]), "+f"(acc_3_154[19]), "+f"(acc_3_154[20]), "+f"(acc_3_154[21]), "+f"(acc_3_154[22]), "+f"(acc_3_154[23]), "+f"(acc_3_154[24]), "+f"(acc_3_154[25]), "+f"(acc_3_154[26]), "+f"(acc_3_154[27]), "+f"(acc_3_154[28]), "+f"(acc_3_154[29]), "+f"(acc_3_154[30]), "+f"(acc_3_154[31])
                : "l"(da), "l"(db));
            }
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
          }
          asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
          #pragma unroll
          for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_154[r]) :: "memory");
          int const t155 = (int)(0LL);
          bool const t156 = (held1_150 >= t155);
          if (t156) {
            const unsigned slot157 = (unsigned)(held1_150) % 4u, parity158 = ((unsigned)(held1_150) / 4u) & 1u;
            if (lane == 0) { tw_mbar_arrive(tw_smem_u32 + 32800 + 8 * slot157); if (peer_has_tile_1_118) tw_mbar_arrive_peer(tw_smem_u32 + 32800 + 8 * slot157); else tw_mbar_arrive(tw_smem_u32 + 32800 + 8 * slot157); }
          } else {
          }
          int const t159 = (int)(1LL);
          int const t160 = (int)((unsigned)aref_i_1_149 + (unsigned)t159);
          float acc_2_161[32];
          #pragma unroll
          for (int r = 0; r < 32; ++r) acc_2_161[r] = acc_3_154[r];
          int aref_i_1_162;
          aref_i_1_162 = t160;
          int held1_163;
          held1_163 = aref_i_1_149;
          #pragma unroll
          for (int r = 0; r < (int)(sizeof(acc_2_147) / sizeof(acc_2_147[0])); ++r) acc_2_147[r] = acc_2_161[r];
          aref_i_1_149 = aref_i_1_162;
          held1_150 = held1_163;
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      }
      #pragma unroll
      for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_2_147[r]) :: "memory");
      int const t164 = (int)(0LL);
      bool const t165 = (held1_150 >= t164);
      if (t165) {
        const unsigned slot166 = (unsigned)(held1_150) % 4u, parity167 = ((unsigned)(held1_150) / 4u) & 1u;
        if (lane == 0) { tw_mbar_arrive(tw_smem_u32 + 32800 + 8 * slot166); if (peer_has_tile_1_118) tw_mbar_arrive_peer(tw_smem_u32 + 32800 + 8 * slot166); else tw_mbar_arrive(tw_smem_u32 + 32800 + 8 * slot166); }
      } else {
      }
      // 14:26  
      float const t168 = 0.0f;
      float t169[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t169[r] = t168;
      float t171[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t171[r] = t168;
      bool t170[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t170[r] = (acc_2_147[r] >= t171[r]);
      float const t172 = 0.01f;
      float t173[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t173[r] = t172;
      float t175[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t175[r] = t172;
      float t174[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) t174[r] = (t175[r] * acc_2_147[r]);
      float acc_6_176[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_6_176[r] = (t170[r] ? acc_2_147[r] : t174[r]);
      // 57:9  
      tw_f16 c_177[32];
      #pragma unroll
      for (int r = 0; r < 32; r += 2) tw_f2h2(acc_6_176[r], acc_6_176[r + 1], c_177[r], c_177[r + 1]);
      // 63:5  
      long long const t178 = (long long)(512LL);
      long long const t179 = (long long)(group_1_129);
      long long const t180 = (long long)((unsigned long long)t178 * (unsigned long long)t179);
      long long const t181 = (long long)(64LL);
      long long const t182 = (long long)(t136);
      long long const t183 = (long long)((unsigned long long)t181 * (unsigned long long)t182);
      long long const t184 = (long long)((unsigned long long)t180 + (unsigned long long)t183);
      long long const t185 = (long long)(64LL);
      long long const t186 = (long long)(pid_n_1_138);
      long long const t187 = (long long)((unsigned long long)t185 * (unsigned long long)t186);
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
          for (int e = 0; e < 2; ++e) t.e[e] = c_177[r + e];
          *(unsigned*)(tw_smem_raw + buf + tw_swz((((lane / 4 % 8) + (warp % 4) * 16 + ((r / 2) % 2) * 8) & 63), (((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63)) - band) * 2, 64, 128)) = t.u;
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.sync 2, 128;" ::: "memory");
        if (tid == 0) {
          tw_tma_store_2d(&tw_tmap4, tw_smem_u32 + buf + 0, (int)(t187) + band + 0, (int)(t184));
          asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
        __syncwarp();
      }
      // 47:5  
      int aref_iter_1_188;
      aref_iter_1_188 = aref_i_1_149;
      aref_iter_1_114 = aref_iter_1_188;
    }
    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  // 63:36  
  tw_cluster_sync();
}
