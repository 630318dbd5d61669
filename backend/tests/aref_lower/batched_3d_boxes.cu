// threads 256, dynamic shared memory 34816 bytes
// tw_tmap0: f16 over parameter 0, extents [Mul(Const(1), Param(5)), Mul(Const(1), Param(3)), Const(2147483647)], strides [Mul(Const(1), Param(7)), Mul(Const(1), Param(6))] (elements), box [32, 64, 1], swizzle 64B, L2 promotion 256B
// tw_tmap1: f16 over parameter 1, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(5)), Const(2147483647)], strides [Mul(Const(1), Param(9)), Mul(Const(1), Param(8))] (elements), box [64, 32, 1], swizzle 128B, L2 promotion 256B
extern "C" __global__ void __launch_bounds__(256, 1) batched_matmul_kernel(tw_f16* __restrict__ a_ptr_, tw_f16* __restrict__ b_ptr_, tw_f16* __restrict__ c_ptr_, int M_, int N_, int K_, int stride_ab_, int stride_am_, int stride_bb_, int stride_bk_, int stride_cb_, int stride_cm_, const __grid_constant__ tw_tmap tw_tmap0, const __grid_constant__ tw_tmap tw_tmap1) {
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
  unsigned char* const tw_smem = tw_smem_raw + 25600;
  // 33:5  
  // aref: 3 slots of 8192 bytes at 0, full/empty barriers at 24576/24600
  if (threadIdx.x == 0) {
  #pragma unroll
    for (int s = 0; s < 3; ++s) {
      tw_mbar_init(tw_smem_u32 + 24576 + 8 * s, 1);
      tw_mbar_init(tw_smem_u32 + 24600 + 8 * s, 4);
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
    // 35:13  
    long long const t1 = (long long)(2147483647LL);
    long long const t2 = (long long)(1LL);
    long long const t3 = (long long)(M_);
    long long const t4 = (long long)((unsigned long long)t2 * (unsigned long long)t3);
    long long const t5 = (long long)(1LL);
    long long const t6 = (long long)(K_);
    long long const t7 = (long long)((unsigned long long)t5 * (unsigned long long)t6);
    long long const t8 = (long long)(1LL);
    long long const t9 = (long long)(stride_ab_);
    long long const t10 = (long long)((unsigned long long)t8 * (unsigned long long)t9);
    long long const t11 = (long long)(1LL);
    long long const t12 = (long long)(stride_am_);
    long long const t13 = (long long)((unsigned long long)t11 * (unsigned long long)t12);
    long long const t14 = (long long)(1LL);
    tw_f16* const t15_base = (tw_f16*)(a_ptr_);
    long long const t15_shape0 = (long long)(t1);
    long long const t15_shape1 = (long long)(t4);
    long long const t15_shape2 = (long long)(t7);
    long long const t15_stride0 = (long long)(t10);
    long long const t15_stride1 = (long long)(t13);
    long long const t15_stride2 = (long long)(t14);
    // 37:13  
    long long const t16 = (long long)(2147483647LL);
    long long const t17 = (long long)(1LL);
    long long const t18 = (long long)(K_);
    long long const t19 = (long long)((unsigned long long)t17 * (unsigned long long)t18);
    long long const t20 = (long long)(1LL);
    long long const t21 = (long long)(N_);
    long long const t22 = (long long)((unsigned long long)t20 * (unsigned long long)t21);
    long long const t23 = (long long)(1LL);
    long long const t24 = (long long)(stride_bb_);
    long long const t25 = (long long)((unsigned long long)t23 * (unsigned long long)t24);
    long long const t26 = (long long)(1LL);
    long long const t27 = (long long)(stride_bk_);
    long long const t28 = (long long)((unsigned long long)t26 * (unsigned long long)t27);
    long long const t29 = (long long)(1LL);
    tw_f16* const t30_base = (tw_f16*)(b_ptr_);
    long long const t30_shape0 = (long long)(t16);
    long long const t30_shape1 = (long long)(t19);
    long long const t30_shape2 = (long long)(t22);
    long long const t30_stride0 = (long long)(t25);
    long long const t30_stride1 = (long long)(t28);
    long long const t30_stride2 = (long long)(t29);
    // 22:13  
    int const pid_m_31 = (int)blockIdx.x;
    // 23:13  
    int const pid_n_32 = (int)blockIdx.y;
    // 24:13  
    int const pid_b_33 = (int)blockIdx.z;
    // 33:21  
    int const t34 = (int)(0LL);
    int const t35 = (int)(32LL);
    for (int k0_36 = t34; k0_36 < K_; k0_36 += t35) {
      // 35:13  
      long long const t37 = (long long)(1LL);
      long long const t38 = (long long)(pid_b_33);
      long long const t39 = (long long)((unsigned long long)t37 * (unsigned long long)t38);
      long long const t40 = (long long)(64LL);
      long long const t41 = (long long)(pid_m_31);
      long long const t42 = (long long)((unsigned long long)t40 * (unsigned long long)t41);
      long long const t43 = (long long)(1LL);
      long long const t44 = (long long)(k0_36);
      long long const t45 = (long long)((unsigned long long)t43 * (unsigned long long)t44);
      // 37:13  
      long long const t46 = (long long)(1LL);
      long long const t47 = (long long)(pid_b_33);
      long long const t48 = (long long)((unsigned long long)t46 * (unsigned long long)t47);
      long long const t49 = (long long)(1LL);
      long long const t50 = (long long)(k0_36);
      long long const t51 = (long long)((unsigned long long)t49 * (unsigned long long)t50);
      long long const t52 = (long long)(64LL);
      long long const t53 = (long long)(pid_n_32);
      long long const t54 = (long long)((unsigned long long)t52 * (unsigned long long)t53);
      int const t55 = (k0_36 / t35);
      const unsigned slot56 = (unsigned)(t55) % 3u, parity57 = ((unsigned)(t55) / 3u) & 1u;
      if (tid == 0) {
        tw_mbar_wait(tw_smem_u32 + 24600 + 8 * slot56, parity57 ^ 1u);
        tw_mbar_expect_tx(tw_smem_u32 + 24576 + 8 * slot56, 8192);
        tw_tma_3d(tw_smem_u32 + 0 + slot56 * 8192 + 0 + 0, &tw_tmap0, (int)(t45) + 0, (int)(t42), (int)(t39), tw_smem_u32 + 24576 + 8 * slot56);
        tw_tma_3d(tw_smem_u32 + 0 + slot56 * 8192 + 4096 + 0, &tw_tmap1, (int)(t54) + 0, (int)(t51), (int)(t48), tw_smem_u32 + 24576 + 8 * slot56);
      }
    }
  } else {
    // partition consumer (4 warps, from warp 4)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 232;" ::: "memory");
    const int tid = threadIdx.x - 128;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // 22:13  
    int const pid_m_1_58 = (int)blockIdx.x;
    // 23:13  
    int const pid_n_1_59 = (int)blockIdx.y;
    // 24:13  
    int const pid_b_1_60 = (int)blockIdx.z;
    // 27:14  
    int const t61 = (int)((unsigned)pid_b_1_60 * (unsigned)stride_cb_);
    tw_f16* const c_ptr_1_62 = (c_ptr_ + t61);
    // 29:22  
    int const t63 = (int)(64LL);
    int const t64 = (int)((unsigned)pid_m_1_58 * (unsigned)t63);
    int t65[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t65[r] = 0 + (((lane % 32) + (warp % 4) * 32 + 0) & 63);
    int t66[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t66[r] = t64;
    int offs_m_67[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) offs_m_67[r] = (int)((unsigned)t66[r] + (unsigned)t65[r]);
    // 30:22  
    int const t68 = (int)(64LL);
    int const t69 = (int)((unsigned)pid_n_1_59 * (unsigned)t68);
    int t70[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t70[r] = 0 + (((lane % 32) + (warp % 4) * 32 + 0) & 63);
    int t71[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t71[r] = t69;
    int offs_n_72[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) offs_n_72[r] = (int)((unsigned)t71[r] + (unsigned)t70[r]);
    // 32:11  
    float acc_73[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) acc_73[r] = 0.0f;
    // 33:21  
    int const t74 = (int)(0LL);
    int const t75 = (int)(32LL);
    float acc_2_76[32];
    float acc_77[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) acc_77[r] = 0.0f;
    #pragma unroll
    for (int r = 0; r < 32; ++r) acc_2_76[r] = acc_77[r];
    for (int k0_1_78 = t74; k0_1_78 < K_; k0_1_78 += t75) {
      // 35:13  
      int const t79 = (k0_1_78 / t75);
      const unsigned slot80 = (unsigned)(t79) % 3u, parity81 = ((unsigned)(t79) / 3u) & 1u;
      tw_mbar_wait(tw_smem_u32 + 24576 + 8 * slot80, parity81);
      // 39:15  
      // dot 64x64x32 (#mma<v3, warps = [4, 1], instr = 16x64>)
      float acc_3_82[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_3_82[r] = acc_2_76[r];
      {
        const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
        const int gm_ = (warp / 4) % 1, gn_ = warp / 4;
        #pragma unroll
        for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_82[r]) :: "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        #pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
          const unsigned kb = ks * 32;
          const unsigned k0 = ks * 16;
          const unsigned long long da = tw_desc(smem_u32 + (0 + slot80 * 8192 + 0) + (0 + gm_ * 64) * 64, tw_lin(0, kb, 64, 64), 64);
          const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot80 * 8192 + 4096) + tw_lin(0, (0 + gn_ * 64) * 2, 32, 128), k0 * 128, 128, 32);
          asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 1;\n}"
            : "+f"(acc_3_82[0]), "+f"(acc_3_82[1]), "+f"(acc_3_82[2]), "+f"(acc_3_82[3]), "+f"(acc_3_82[4]), "+f"(acc_3_82[5]), "+f"(acc_3_82[6]), "+f"(acc_3_82[7]), "+f"(acc_3_82[8]), "+f"(acc_3_82[9]), "+f"(acc_3_82[10]), "+f"(acc_3_82[11]), "+f"(acc_3_82[12]), "+f"(acc_3_82[13]), "+f"(acc_3_82[14]), "+f"(acc_3_82[15]), "+f"(acc_3_82[16]), "+f"(acc_3_82[17]), "+f"(acc_3_82[18]), "+f"(acc_3_82[19]), "+f"(acc_3_82[20]), "+f"(acc_3_82[21]), "+f"(acc_3_82[22]), "+f"(acc_3_82[23]), "+f"(acc_3_82[24]), "+f"(acc_3_82[25]), "+f"(acc_3_82[26]), "+f"(acc_3_82[27]), "+f"(acc_3_82[28]), "+f"(acc_3_82[29]), "+f"(acc_3_82[30]), "+f"(acc_3_82[31])
            : "l"(da), "l"(db));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        #pragma unroll
        for (int r = 0; r < 32; ++r) asm volatile("" : "+f"(acc_3_82[r]) :: "memory");
      }
      const unsigned slot83 = (unsigned)(t79) % 3u, parity84 = ((unsigned)(t79) / 3u) & 1u;
      if (lane == 0) tw_mbar_arrive(tw_smem_u32 + 24600 + 8 * slot83);
      float acc_2_85[32];
      #pragma unroll
      for (int r = 0; r < 32; ++r) acc_2_85[r] = acc_3_82[r];
      #pragma unroll
      for (int r = 0; r < (int)(sizeof(acc_2_76) / sizeof(acc_2_76[0])); ++r) acc_2_76[r] = acc_2_85[r];
    }
    // 41:22  
    int t88[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t88[r] = t64;
    int t89[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t89[r] = 0 + (((lane % 32) + (warp % 4) * 32 + 0) & 63);
    int offs_m_87[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) offs_m_87[r] = (int)((unsigned)t88[r] + (unsigned)t89[r]);
    int t86[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t86[r] = offs_m_87[0];
    int t90[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t90[r] = stride_cm_;
    int t91[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t91[r] = (int)((unsigned)t86[r] * (unsigned)t90[r]);
    tw_f16* t92[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t92[r] = c_ptr_1_62;
    tw_f16* t93[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t93[r] = t92[r] + t91[r];
    int t96[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t96[r] = t69;
    int t97[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t97[r] = 0 + (((lane % 32) + (warp % 2) * 32 + 0) & 63);
    int offs_n_95[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) offs_n_95[r] = (int)((unsigned)t96[r] + (unsigned)t97[r]);
    int t94[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t94[r] = offs_n_95[0];
    int const t98 = (int)(1LL);
    int t99[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t99[r] = t98;
    int t100[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t100[r] = (int)((unsigned)t94[r] * (unsigned)t99[r]);
    tw_f16* t101[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t101[r] = t93[0];
    int t102[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t102[r] = t100[0];
    int t108[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t108[r] = t69;
    int t109[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t109[r] = 0 + ((0 + ((r / 1) % 64) * 1) & 63);
    int offs_n_107[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) offs_n_107[r] = (int)((unsigned)t108[r] + (unsigned)t109[r]);
    int t106[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t106[r] = offs_n_107[((r / 1) % 64) * 1];
    int t110[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t110[r] = t98;
    int t105[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t105[r] = (int)((unsigned)t106[r] * (unsigned)t110[r]);
    int t104[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t104[r] = t105[((r / 1) % 64) * 1];
    tw_f16* c_ptrs_103[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) c_ptrs_103[r] = t101[r] + t104[r];
    // 42:22  
    tw_f16 t111[32];
    #pragma unroll
    for (int r = 0; r < 32; r += 2) tw_f2h2(acc_2_76[r], acc_2_76[r + 1], t111[r], t111[r + 1]);
    int t112[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t112[r] = offs_m_87[0];
    int t113[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t113[r] = M_;
    bool t114[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t114[r] = (t112[r] < t113[r]);
    int t115[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t115[r] = offs_n_95[0];
    int t116[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t116[r] = N_;
    bool t117[1];
    #pragma unroll
    for (int r = 0; r < 1; ++r) t117[r] = (t115[r] < t116[r]);
    bool t118[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t118[r] = t114[0];
    bool t119[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t119[r] = t117[0];
    int t123[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t123[r] = offs_n_107[((r / 1) % 64) * 1];
    int t124[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t124[r] = N_;
    bool t122[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t122[r] = (t123[r] < t124[r]);
    bool t121[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t121[r] = t122[((r / 1) % 64) * 1];
    bool t120[64];
    #pragma unroll
    for (int r = 0; r < 64; ++r) t120[r] = (t118[r] & t121[r]);
    tw_f16* t128[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t128[r] = c_ptr_1_62;
    int t132[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t132[r] = t64;
    int t133[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) t133[r] = 0 + (((lane / 8 % 4) + (warp % 4) * 4 + ((r / 1) % 4) * 16) & 63);
    int offs_m_131[4];
    #pragma unroll
    for (int r = 0; r < 4; ++r) offs_m_131[r] = (int)((unsigned)t132[r] + (unsigned)t133[r]);
    int t130[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t130[r] = offs_m_131[((r / 8) % 4) * 1];
    int t134[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t134[r] = stride_cm_;
    int t129[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t129[r] = (int)((unsigned)t130[r] * (unsigned)t134[r]);
    tw_f16* t127[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t127[r] = t128[r] + t129[r];
    tw_f16* t126[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t126[r] = t127[((r / 8) % 4) * 8];
    int t139[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t139[r] = t69;
    int t140[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t140[r] = 0 + (((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63);
    int offs_n_138[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) offs_n_138[r] = (int)((unsigned)t139[r] + (unsigned)t140[r]);
    int t137[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t137[r] = offs_n_138[((r / 1) % 8) * 1];
    int t141[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t141[r] = t98;
    int t136[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t136[r] = (int)((unsigned)t137[r] * (unsigned)t141[r]);
    int t135[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t135[r] = t136[((r / 1) % 8) * 1];
    tw_f16* c_ptrs_125[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) c_ptrs_125[r] = t126[r] + t135[r];
    int t145[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t145[r] = offs_m_131[((r / 8) % 4) * 1];
    int t146[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t146[r] = M_;
    bool t144[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t144[r] = (t145[r] < t146[r]);
    bool t143[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t143[r] = t144[((r / 8) % 4) * 8];
    int t149[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t149[r] = offs_n_138[((r / 1) % 8) * 1];
    int t150[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t150[r] = N_;
    bool t148[8];
    #pragma unroll
    for (int r = 0; r < 8; ++r) t148[r] = (t149[r] < t150[r]);
    bool t147[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t147[r] = t148[((r / 1) % 8) * 1];
    bool t142[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) t142[r] = (t143[r] & t147[r]);
    // #mma<v3, warps = [4, 1], instr = 16x64> -> #blocked<spt = [1, 8], tpw = [4, 8], wpc = [4, 1], order = [1, 0]> through shared memory (2- and 8-element vectors, padded rows)
    asm volatile("bar.sync 2, 128;" ::: "memory");
    #pragma unroll
    for (int r = 0; r < 32; r += 2) {
      union { unsigned u; tw_f16 e[2]; } t;
      #pragma unroll
      for (int e = 0; e < 2; ++e) t.e[e] = t111[r + e];
      *(unsigned*)((tw_f16*)tw_smem + (((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 8) * 8) & 63) + ((((lane / 4 % 8) + (warp % 4) * 16 + ((r / 2) % 2) * 8) & 63)) * 72) = t.u;
    }
    asm volatile("bar.sync 2, 128;" ::: "memory");
    #pragma unroll
    for (int g = 0; g < 4; ++g) {
      union { uint4 u; tw_f16 e[8]; } t;
      if (t142[g * 8]) { t.u = *(uint4*)((tw_f16*)tw_smem + (((lane % 8) * 8 + ((g * 8 / 1) % 8) * 1) & 63) + ((((lane / 8 % 4) + (warp % 4) * 4 + ((g * 8 / 8) % 4) * 16) & 63)) * 72); *(uint4*)(c_ptrs_125[g * 8]) = t.u; }
    }
  }
}
