// threads 384, dynamic shared memory 230400 bytes
// tw_tmap0: f16 over parameter 0, extents [Max(Add(Sub(Param(5), Const(1)), Const(64)), Const(64)), Const(2147483647)], strides [Mul(Const(1), Param(6))] (elements), box [64, 128], swizzle 128B, L2 promotion 256B
// tw_tmap1: f16 over parameter 1, extents [Max(Add(Mul(Const(256), Sub(NumPrograms(Y), Const(1))), Const(256)), Const(256)), Const(2147483647)], strides [Mul(Const(1), Param(7))] (elements), box [64, 64], swizzle 128B, L2 promotion 256B
// tw_tmap2: f16 over parameter 2, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(8))] (elements), box [64, 128], swizzle 128B, L2 promotion 128B
// tw_tmap3: f16 over parameter 2, extents [Mul(Const(1), Param(4)), Mul(Const(1), Param(3))], strides [Mul(Const(1), Param(8))] (elements), box [64, 128], swizzle 128B, L2 promotion 128B
extern "C" __global__ void __launch_bounds__(384, 1) tw_k_matmul(tw_f16* __restrict__ a_ptr_, tw_f16* __restrict__ b_ptr_, tw_f16* __restrict__ c_ptr_, int M_, int N_, int K_, int stride_am_, int stride_bk_, int stride_cm_, const __grid_constant__ tw_tmap tw_tmap0, const __grid_constant__ tw_tmap tw_tmap1, const __grid_constant__ tw_tmap tw_tmap2, const __grid_constant__ tw_tmap tw_tmap3) {
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
  unsigned char* const tw_smem = tw_smem_raw + 230400;
  // 21:5  
  // aref: 4 slots of 49152 bytes at 0, full/empty barriers at 196608/196640
  if (threadIdx.x == 0) {
  #pragma unroll
    for (int s = 0; s < 4; ++s) {
      tw_mbar_init(tw_smem_u32 + 196608 + 8 * s, 1);
      tw_mbar_init(tw_smem_u32 + 196640 + 8 * s, 8);
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
    // 22:13  
    long long const t1 = (long long)(2147483647LL);
    long long const t2 = (long long)(K_);
    long long const t3 = (long long)(1LL);
    long long const t4 = (long long)((unsigned long long)t2 - (unsigned long long)t3);
    long long const t5 = (long long)(64LL);
    long long const t6 = (long long)((unsigned long long)t4 + (unsigned long long)t5);
    long long const t7 = (long long)(64LL);
    long long const t8 = (t6 > t7 ? t6 : t7);
    long long const t9 = (long long)(1LL);
    long long const t10 = (long long)(stride_am_);
    long long const t11 = (long long)((unsigned long long)t9 * (unsigned long long)t10);
    long long const t12 = (long long)(1LL);
    tw_f16* const t13_base = (tw_f16*)(a_ptr_);
    long long const t13_shape0 = (long long)(t1);
    long long const t13_shape1 = (long long)(t8);
    long long const t13_stride0 = (long long)(t11);
    long long const t13_stride1 = (long long)(t12);
    // 23:13  
    long long const t14 = (long long)(2147483647LL);
    long long const t15 = (long long)(256LL);
    int const t16 = (int)gridDim.y;
    long long const t17 = (long long)(t16);
    long long const t18 = (long long)(1LL);
    long long const t19 = (long long)((unsigned long long)t17 - (unsigned long long)t18);
    long long const t20 = (long long)((unsigned long long)t15 * (unsigned long long)t19);
    long long const t21 = (long long)(256LL);
    long long const t22 = (long long)((unsigned long long)t20 + (unsigned long long)t21);
    long long const t23 = (long long)(256LL);
    long long const t24 = (t22 > t23 ? t22 : t23);
    long long const t25 = (long long)(1LL);
    long long const t26 = (long long)(stride_bk_);
    long long const t27 = (long long)((unsigned long long)t25 * (unsigned long long)t26);
    long long const t28 = (long long)(1LL);
    tw_f16* const t29_base = (tw_f16*)(b_ptr_);
    long long const t29_shape0 = (long long)(t14);
    long long const t29_shape1 = (long long)(t24);
    long long const t29_stride0 = (long long)(t27);
    long long const t29_stride1 = (long long)(t28);
    // 15:13  
    int const pid_m_30 = (int)blockIdx.x;
    // 16:13  
    int const pid_n_31 = (int)blockIdx.y;
    // 21:20  
    int const t32 = (int)(0LL);
    int const t33 = (int)(64LL);
    for (int k_34 = t32; k_34 < K_; k_34 += t33) {
      // 22:13  
      long long const t35 = (long long)(128LL);
      long long const t36 = (long long)(pid_m_30);
      long long const t37 = (long long)((unsigned long long)t35 * (unsigned long long)t36);
      long long const t38 = (long long)(1LL);
      long long const t39 = (long long)(k_34);
      long long const t40 = (long long)((unsigned long long)t38 * (unsigned long long)t39);
      // 23:13  
      long long const t41 = (long long)(1LL);
      long long const t42 = (long long)(k_34);
      long long const t43 = (long long)((unsigned long long)t41 * (unsigned long long)t42);
      long long const t44 = (long long)(256LL);
      long long const t45 = (long long)(pid_n_31);
      long long const t46 = (long long)((unsigned long long)t44 * (unsigned long long)t45);
      int const t47 = (k_34 / t33);
      const unsigned slot48 = (unsigned)(t47) % 4u, parity49 = ((unsigned)(t47) / 4u) & 1u;
      if (tid == 0) {
        tw_mbar_wait(tw_smem_u32 + 196640 + 8 * slot48, parity49 ^ 1u);
        tw_mbar_expect_tx(tw_smem_u32 + 196608 + 8 * slot48, 49152);
        tw_tma_2d(tw_smem_u32 + 0 + slot48 * 49152 + 0 + 0, &tw_tmap0, (int)(t40) + 0, (int)(t37), tw_smem_u32 + 196608 + 8 * slot48);
        tw_tma_2d(tw_smem_u32 + 0 + slot48 * 49152 + 16384 + 0, &tw_tmap1, (int)(t46) + 0, (int)(t43), tw_smem_u32 + 196608 + 8 * slot48);
        tw_tma_2d(tw_smem_u32 + 0 + slot48 * 49152 + 16384 + 8192, &tw_tmap1, (int)(t46) + 64, (int)(t43), tw_smem_u32 + 196608 + 8 * slot48);
        tw_tma_2d(tw_smem_u32 + 0 + slot48 * 49152 + 16384 + 16384, &tw_tmap1, (int)(t46) + 128, (int)(t43), tw_smem_u32 + 196608 + 8 * slot48);
        tw_tma_2d(tw_smem_u32 + 0 + slot48 * 49152 + 16384 + 24576, &tw_tmap1, (int)(t46) + 192, (int)(t43), tw_smem_u32 + 196608 + 8 * slot48);
      }
    }
  } else {
    // partition consumer (8 warps, from warp 4)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
    const int tid = threadIdx.x - 128;
    const int lane = tid & 31;
    const int warp = __shfl_sync(0xffffffff, tid >> 5, 0);
    (void)tid; (void)lane; (void)warp;
    // 27:5  
    long long const t50 = (long long)(1LL);
    long long const t51 = (long long)(M_);
    long long const t52 = (long long)((unsigned long long)t50 * (unsigned long long)t51);
    long long const t53 = (long long)(1LL);
    long long const t54 = (long long)(N_);
    long long const t55 = (long long)((unsigned long long)t53 * (unsigned long long)t54);
    long long const t56 = (long long)(1LL);
    long long const t57 = (long long)(stride_cm_);
    long long const t58 = (long long)((unsigned long long)t56 * (unsigned long long)t57);
    long long const t59 = (long long)(1LL);
    tw_f16* const t60_base = (tw_f16*)(c_ptr_);
    long long const t60_shape0 = (long long)(t52);
    long long const t60_shape1 = (long long)(t55);
    long long const t60_stride0 = (long long)(t58);
    long long const t60_stride1 = (long long)(t59);
    // 28:5  
    tw_f16* const narrow_61_base = (tw_f16*)(c_ptr_);
    long long const narrow_61_shape0 = (long long)(t52);
    long long const narrow_61_shape1 = (long long)(t55);
    long long const narrow_61_stride0 = (long long)(t58);
    long long const narrow_61_stride1 = (long long)(t59);
    // 15:13  
    int const pid_m_1_62 = (int)blockIdx.x;
    // 16:13  
    int const pid_n_1_63 = (int)blockIdx.y;
    // 20:11  
    float acc_64[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) acc_64[r] = 0.0f;
    // 21:20  
    int const t65 = (int)(0LL);
    int const t66 = (int)(64LL);
    float acc_2_67[128];
    float acc_68[128];
    #pragma unroll
    for (int r = 0; r < 128; ++r) acc_68[r] = 0.0f;
    #pragma unroll
    for (int r = 0; r < 128; ++r) acc_2_67[r] = acc_68[r];
    for (int k_1_69 = t65; k_1_69 < K_; k_1_69 += t66) {
      // 22:13  
      int const t70 = (k_1_69 / t66);
      const unsigned slot71 = (unsigned)(t70) % 4u, parity72 = ((unsigned)(t70) / 4u) & 1u;
      tw_mbar_wait(tw_smem_u32 + 196608 + 8 * slot71, parity72);
      // 24:15  
      // dot 128x256x64 (#mma<v3, warps = [8, 1], instr = 16x256>)
      float acc_3_73[128];
      #pragma unroll
      for (int r = 0; r < 128; ++r) acc_3_73[r] = acc_2_67[r];
      {
        const unsigned smem_u32 = (unsigned)__cvta_generic_to_shared(tw_smem_raw);
        const int gm_ = (warp / 4) % 2, gn_ = warp / 8;
        #pragma unroll
        for (int r = 0; r < 128; ++r) asm volatile("" : "+f"(acc_3_73[r]) :: "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        #pragma unroll
        for (int ks = 0; ks < 4; ++ks) {
          const unsigned kb = ks * 32;
          const unsigned k0 = ks * 16;
          const unsigned long long da = tw_desc(smem_u32 + (0 + slot71 * 49152 + 0) + (0 + gm_ * 64) * 128, tw_lin(0, kb, 128, 128), 128);
          const unsigned long long db = tw_desc_mn(smem_u32 + (0 + slot71 * 49152 + 16384) + tw_lin(0, (0 + gn_ * 256) * 2, 64, 128), k0 * 128, 128, 64);
          asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\nwgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 1;\n}"
            : "+f"(acc_3_73[0]), "+f"(acc_3_73[1]), "+f"(acc_3_73[2]), "+f"(acc_3_73[3]), "+f"(acc_3_73[4]), "+f"(acc_3_73[5]), "+f"(acc_3_73[6]), "+f"(acc_3_73[7]), "+f"(acc_3_73[8]), "+f"(acc_3_73[9]), "+f"(acc_3_73[10]), "+f"(acc_3_73[11]), "+f"(acc_3_73[12]), "+f"(acc_3_73[13]), "+f"(acc_3_73[14]), "+f"(acc_3_73[15]), "+f"(acc_3_73[16]), "+f"(acc_3_73[17]), "+f"(acc_3_73[18]), "+f"(acc_3_73[19]), "+f"(acc_3_73[20]), "+f"(acc_3_73[21]), "+f"(acc_3_73[22]), "+f"(acc_3_73[23]), "+f"(acc_3_73[24]), "+f"(acc_3_73[25]), "+f"(acc_3_73[26]), "+f"(acc_3_73[27]), "+f"(acc_3_73[28]), "+f"(acc_3_73[29]), "+f"(acc_3_73[30]), "+f"(acc_3_73[31]), "+f"(acc_3_73[32]), "+f"(acc_3_73[33]), "+f"(acc_3_73[34]), "+f"(acc_3_73[35]), "+f"(acc_3_73[36]), "+f"(acc_3_73[37]), "+f"(acc_3_73[38]), "+f"(acc_3_73[39]), "+f"(acc_3_73[40]), "+f"(acc_3_73[41]), "+f"(acc_3_73[42]), "+f"(acc_3_73[43]), "+f"(acc_3_73[44]), "+f"(acc_3_73[45]), "+f"(acc_3_73[46]), "+f"(acc_3_73[47]), "+f"(acc_3_73[48]), "+f"(acc_3_73[49]), "+f"(acc_3_73[50]), "+f"(acc_3_73[51]), "+f"(acc_3_73[52]), "+f"(acc_3_73[53]), "+f"(acc_3_73[54]), "+f"(acc_3_73[55]), "+f"(acc_3_73[56]), "+f"(acc_3_73[57]), "+f"(acc_3_73[58]), "+f"(acc_3_73[59]), "+f"(acc_3_73[60]), "+f"(acc_3_73[61]), "+f"(acc_3_73[62]), "+f"(acc_3_73[63]), "+f"(acc_3_73[64]), "+f"(acc_3_73[65]), "+f"(acc_3_73[66]), "+f"(acc_3_73[67]), "+f"(acc_3_73[68]), "+f"(acc_3_73[69]), "+f"(acc_3_73[70]), "+f"(acc_3_73[71]), "+f"(acc_3_73[72]), "+f"(acc_3_73[73]), "+f"(acc_3_73[74]), "+f"(acc_3_73[75]), "+f"(acc_3_73[76]), "+f"(acc_3_73[77]), "+f"(acc_3_73[78]), "+f"(acc_3_73[79]), "+f"(acc_3_73[80]), "+f"(acc_3_73[81]), "+f"(acc_3_73[82]), "+f"(acc_3_73[83]), "+f"(acc_3_73[84]), "+f"(acc_3_73[85]), "+f"(acc_3_73[86]), "+f"(acc_3_73[87]), "+f"(acc_3_73[88]), "+f"(acc_3_73[89]), "+f"(acc_3_73[90]), "+f"(acc_3_73[91]), "+f"(acc_3_73[92]), "+f"(acc_3_73[93]), "+f"(acc_3_73[94]), "+f"(acc_3_73[95]), "+f"(acc_3_73[96]), "+f"(acc_3_73[97]), "+f"(acc_3_73[98]), "+f"(acc_3_73[99]), "+f"(acc_3_73[100]), "+f"(acc_3_73[101]), "+f"(acc_3_73[102]), "+f"(acc_3_73[103]), "+f"(acc_3_73[104]), "+f"(acc_3_73[105]), "+f"(acc_3_73[106]), "+f"(acc_3_73[107]), "+f"(acc_3_73[108]), "+f"(acc_3_73[109]), "+f"(acc_3_73[110]), "+f"(acc_3_73[111]), "+f"(acc_3_73[112]), "+f"(acc_3_73[113]), "+f"(acc_3_73[114]), "+f"(acc_3_73[115]), "+f"(acc_3_73[116]), "+f"(acc_3_73[117]), "+f"(acc_3_73[118]), "+f"(acc_3_73[119]), "+f"(acc_3_73[120]), "+f"(acc_3_73[121]), "+f"(acc_3_73[122]), "+f"(acc_3_73[123]), "+f"(acc_3_73[124]), "+f"(acc_3_73[125]), "+f"(acc_3_73[126]), "+f"(acc_3_73[127])
            : "l"(da), "l"(db));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        #pragma unroll
        for (int r = 0; r < 128; ++r) asm volatile("" : "+f"(acc_3_73[r]) :: "memory");
      }
      const unsigned slot74 = (unsigned)(t70) % 4u, parity75 = ((unsigned)(t70) / 4u) & 1u;
      if (lane == 0) tw_mbar_arrive(tw_smem_u32 + 196640 + 8 * slot74);
      float acc_2_76[128];
      #pragma unroll
      for (int r = 0; r < 128; ++r) acc_2_76[r] = acc_3_73[r];
      #pragma unroll
      for (int r = 0; r < (int)(sizeof(acc_2_67) / sizeof(acc_2_67[0])); ++r) acc_2_67[r] = acc_2_76[r];
    }
    // 25:9  
    tw_f16 c_77[128];
    #pragma unroll
    for (int r = 0; r < 128; r += 2) tw_f2h2(acc_2_67[r], acc_2_67[r + 1], c_77[r], c_77[r + 1]);
    // 27:5  
    long long const t78 = (long long)(128LL);
    long long const t79 = (long long)(pid_m_1_62);
    long long const t80 = (long long)((unsigned long long)t78 * (unsigned long long)t79);
    long long const t81 = (long long)(256LL);
    long long const t82 = (long long)(pid_n_1_63);
    long long const t83 = (long long)((unsigned long long)t81 * (unsigned long long)t82);
    // TMA store: boxes [128, 64] x1 per band of 64 columns (4 bands, 2 buffers), swizzle 128B, staged in 32768 bytes of shared memory (staging at byte 197632)
    #pragma unroll
    for (int band = 0; band < 256; band += 64) {
      const unsigned buf = (197632u + ((unsigned)(band / 64) & 1u) * 16384u);
      if (tid == 0) {
        if (band == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        else asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      }
      asm volatile("bar.sync 2, 256;" ::: "memory");
      #pragma unroll
      for (int r = 0; r < 128; r += 2) {
        union { unsigned u; tw_f16 e[2]; } t;
        #pragma unroll
        for (int e = 0; e < 2; ++e) t.e[e] = c_77[r + e];
        if ((unsigned)(((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 32) * 8) & 255)) - band) < 64u) *(unsigned*)(tw_smem_raw + buf + tw_swz((((lane / 4 % 8) + (warp % 8) * 16 + ((r / 2) % 2) * 8) & 127), (((((lane % 4) * 2 + ((r / 1) % 2) * 1 + ((r / 4) % 32) * 8) & 255)) - band) * 2, 128, 128)) = t.u;
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      asm volatile("bar.sync 2, 256;" ::: "memory");
      if (tid == 0) {
        tw_tma_store_2d(&tw_tmap2, tw_smem_u32 + buf + 0, (int)(t83) + band + 0, (int)(t80));
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      }
      __syncwarp();
    }
    // 28:5  
    tw_f16 zeros_84[32];
    #pragma unroll
    for (int r = 0; r < 32; ++r) zeros_84[r] = tw_f2h(0.0f);
    // TMA store: boxes [128, 64] x1 for the tile, swizzle 128B, staged in 16384 bytes of shared memory (staging at byte 197632)
    {
      const int band = 0;
      const unsigned buf = 197632u;
      if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
      asm volatile("bar.sync 2, 256;" ::: "memory");
      #pragma unroll
      for (int r = 0; r < 32; r += 8) {
        union { uint4 u; tw_f16 e[8]; } t;
        #pragma unroll
        for (int e = 0; e < 8; ++e) t.e[e] = zeros_84[r + e];
        *(uint4*)(tw_smem_raw + buf + tw_swz((((lane / 8 % 4) + (warp % 8) * 4 + ((r / 8) % 4) * 32) & 127), (((((lane % 8) * 8 + ((r / 1) % 8) * 1) & 63)) - band) * 2, 128, 128)) = t.u;
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      asm volatile("bar.sync 2, 256;" ::: "memory");
      if (tid == 0) {
        tw_tma_store_2d(&tw_tmap3, tw_smem_u32 + buf + 0, (int)(t83) + band + 0, (int)(t80));
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      }
      __syncwarp();
    }
    if (tid == 0) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  // 27:71  
}
